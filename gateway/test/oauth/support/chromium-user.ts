// The user in a real browser: opens the authorization URL the client handed over, signs in at the company identity
// provider (its development login form: any user name), continues past its consent, and presses Allow (or Deny) on
// the gateway's consent page, until the browser arrives at the client's redirect URI.
import type { Cookie, Page } from "playwright-core";

export interface ChromiumLogin {
  /** The gateway's consent page as the user saw it (its text), when one was shown. */
  consentText?: string;
  /** The gateway's cookies the browser held while at the identity provider's sign-in. */
  cookiesAtSignIn?: Cookie[];
}

const MAX_PAGES = 12;

export async function logInWithChromium(
  page: Page,
  start: string,
  options: { user: string; gateway: string; arrived: Promise<URL>; deny?: boolean },
): Promise<ChromiumLogin> {
  let done = false;
  const finished = options.arrived.then(() => {
    done = true;
  });
  const result: ChromiumLogin = {};
  const trail: string[] = [];
  const load = (action: Promise<unknown>) =>
    Promise.race([Promise.all([action, page.waitForLoadState("load")]), finished]);
  await load(page.goto(start));
  for (let step = 0; step < MAX_PAGES && !done; step++) {
    const url = new URL(page.url());
    trail.push(url.origin + url.pathname);
    if (url.origin === options.gateway && url.pathname.startsWith("/oauth/interaction/")) {
      result.consentText = await page.locator("body").innerText();
      const button = page.getByRole("button", { name: options.deny ? "Deny" : "Allow" });
      await load(Promise.all([page.waitForURL((next) => next.href !== url.href), button.click()]));
      continue;
    }
    const login = page.locator('input[name="login"]');
    const submit = page.locator('button[type="submit"]').first();
    if (url.origin === options.gateway || (await submit.count()) === 0) {
      const text = await page.locator("body").innerText();
      throw new Error(
        `the browser is stuck at ${url.href}: ${text.slice(0, 300)} (via ${trail.join(" -> ")})`,
      );
    }
    if ((await login.count()) > 0) {
      // All the browser holds for the gateway's host, whatever their path (cookies(url) filters by path too).
      const host = new URL(options.gateway).hostname;
      result.cookiesAtSignIn ??= (await page.context().cookies()).filter((c) => c.domain === host);
      await login.fill(options.user);
      await page.locator('input[name="password"]').fill("any-password");
    }
    await load(Promise.all([page.waitForURL((next) => next.href !== url.href), submit.click()]));
  }
  if (!done) throw new Error(`no arrival at the client after ${trail.join(" -> ")}`);
  return result;
}
