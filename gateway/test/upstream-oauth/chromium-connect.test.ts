// The vendor-connect link in a real browser (Debian's Chromium through playwright-core): the user opens the link from
// the gateway's -32042 answer, signs in at the company identity provider (on ::1, another site than the gateway, so
// the gateway's cookie has to survive a cross-site return), logs in and consents at the vendor, and lands on the
// gateway's "connected" page; the MCP call then runs as the user at the vendor. Then Mallory's link, opened in the same
// (Alice's) browser, is refused.

import type { Browser, Page } from "playwright-core";
import { CHROMIUM_MISSING, launchChromium } from "svc-testkit/chromium";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConnectStack, linkOf, startConnectStack } from "./support/connect-stack.ts";

let stack: ConnectStack;
let browser: Browser;

describe.skipIf(CHROMIUM_MISSING !== undefined)(
  `vendor connect in Chromium${CHROMIUM_MISSING === undefined ? "" : ` (skipped: ${CHROMIUM_MISSING})`}`,
  () => {
    beforeAll(async () => {
      stack = await startConnectStack();
      browser = await launchChromium();
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
    });

    /** Opens `link` and goes through every sign-in and consent form as `user`, until a page of the gateway's own. */
    async function follow(
      page: Page,
      link: string,
      user: string,
    ): Promise<{ status: number | undefined; text: string }> {
      let response = await page.goto(link);
      for (let step = 0; step < 12; step++) {
        const url = new URL(page.url());
        if (url.origin === stack.gatewayUrl) {
          return { status: response?.status(), text: await page.locator("body").innerText() };
        }
        const login = page.locator('input[name="login"]');
        if ((await login.count()) > 0) {
          await login.fill(user);
          await page.locator('input[name="password"]').fill("any-password");
        }
        const [next] = await Promise.all([
          page.waitForNavigation({ waitUntil: "load" }),
          page.locator('button[type="submit"]').first().click(),
        ]);
        response = next;
      }
      throw new Error(`stuck at ${page.url()}`);
    }

    it("signs Alice in at the company provider, connects her vendor account, and her call runs as her", async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const landed = await follow(page, linkOf(await stack.whoami("alice")), "alice");
      expect(landed.status).toBe(200);
      expect(landed.text).toContain("Your account at 'vendor' is connected");
      expect(await stack.whoami("alice")).toEqual({ ranAs: "alice" });
      const [cookie] = (await context.cookies()).filter((c) => c.name === "svc_upstream_browser");
      expect(cookie).toMatchObject({ path: "/oauth/upstream", httpOnly: true, sameSite: "Lax" });

      // Mallory's link in Alice's browser: refused, nothing connected for Mallory.
      const refused = await follow(page, linkOf(await stack.whoami("mallory")), "alice");
      expect(refused.status).toBe(403);
      expect(refused.text).toContain("made for another user");
      expect("link" in (await stack.whoami("mallory"))).toBe(true);
      await context.close();
    });
  },
);
