// The vendor-connect link through a spawned gateway, as the MCP elicitation spec's "Phishing" section requires: the
// link names the gateway, and leads to the vendor only once the browser's user (signed in at the company identity
// provider) is the user the link was made for. Alice, Mallory and their browsers are separate cookie jars.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ConnectStack, linkOf, startConnectStack } from "./support/connect-stack.ts";
import { FormBrowser } from "./support/form-browser.ts";

let stack: ConnectStack;

beforeAll(async () => {
  stack = await startConnectStack();
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

describe("the connect link", () => {
  it("names the gateway, signs the browser's user in at the company provider, then connects the vendor account", async () => {
    const link = linkOf(await stack.whoami("alice"));
    expect(new URL(link).origin).toBe(stack.gatewayUrl);
    expect(link).toMatch(/\/oauth\/upstream\/connect\/[A-Za-z0-9_-]{43}$/);
    const browser = new FormBrowser("alice");
    const landed = await browser.open(link);
    expect(landed.text).toContain("is connected");
    expect(landed.visited.some((step) => step.startsWith(`GET ${stack.idp.issuer}/auth?`))).toBe(true);
    expect(landed.visited.some((step) => step.startsWith(`GET ${stack.vendors[0]?.issuer}/auth?`))).toBe(
      true,
    );
    expect(await stack.whoami("alice")).toEqual({ ranAs: "alice" });
    // The browser cookie is the gateway's, scoped to the connect routes and not readable by scripts.
    expect([...browser.cookies(stack.gatewayUrl).values()].map((cookie) => cookie.path)).toEqual([
      "/oauth/upstream",
    ]);
  });

  it("refuses Mallory's link opened by Alice, connects nothing, burns the link and audits both", async () => {
    const malloryLink = linkOf(await stack.whoami("mallory"));
    const alice = new FormBrowser("alice");
    const page = await alice.open(malloryLink);
    expect(page.status).toBe(403);
    expect(page.text).toContain("made for another user");
    expect(page.text).not.toContain("mallory");
    // Nothing reached the vendor, and Mallory's calls still need a connection.
    expect(page.visited.some((step) => step.includes(stack.vendors[0]?.issuer as string))).toBe(false);
    expect("link" in (await stack.whoami("mallory"))).toBe(true);
    // The link is gone for everyone, Mallory included.
    expect((await new FormBrowser("mallory").open(malloryLink)).status).toBe(404);
    await vi.waitFor(
      async () => {
        const reasons = (await stack.auditEvents()).map(
          (event) => `${event.reason}:${event.subject}:${event.decision}`,
        );
        expect(reasons).toContain("connect_link_opened_by_other_user:mallory:deny");
        expect(reasons).toContain("connect_link_of_other_user_refused:alice:deny");
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it("refuses the vendor's answer in a browser other than the one the link sent to the vendor", async () => {
    // Mallory opens her own link, stops at the vendor, and hands the vendor's URL to Bob (signed in at the vendor).
    const link = linkOf(await stack.whoami("mallory", "other"));
    const vendorIssuer = stack.vendors[1]?.issuer as string;
    const atVendor = await new FormBrowser("mallory").open(link, `${vendorIssuer}/auth?`);
    expect(atVendor.url.href.startsWith(`${vendorIssuer}/auth?`)).toBe(true);
    const bob = await new FormBrowser("bob").open(atVendor.url.href);
    expect(bob.status).toBe(400);
    expect(bob.text).toContain("another browser");
    expect("link" in (await stack.whoami("mallory", "other"))).toBe(true);
  });

  it("refuses a sign-in answer carried into another browser (login CSRF)", async () => {
    // Mallory signs in at the company provider through a link of her own, keeps the provider's answer, and makes
    // Alice's browser open it: Alice's browser would otherwise be signed in to the gateway as Mallory.
    const link = linkOf(await stack.whoami("mallory"));
    const answer = await new FormBrowser("mallory").open(link, `${stack.gatewayUrl}/oauth/upstream/login?`);
    const alice = await new FormBrowser("alice").open(answer.url.href);
    expect(alice.status).toBe(400);
    expect(alice.text).toContain("started in another browser");
  });

  it("opens a second link of the signed-in user without asking the provider again, and refuses an unknown link", async () => {
    const browser = new FormBrowser("carol");
    await browser.open(linkOf(await stack.whoami("carol")));
    const before = stack.idp.authorizations();
    const second = await browser.open(linkOf(await stack.whoami("carol", "other")));
    expect(second.text).toContain("is connected");
    expect(stack.idp.authorizations()).toBe(before);
    expect(await stack.whoami("carol", "other")).toEqual({ ranAs: "carol" });
    const unknown = await browser.open(`${stack.gatewayUrl}/oauth/upstream/connect/${"A".repeat(43)}`);
    expect(unknown.status).toBe(404);
  });

  it("hands out the same link and elicitation while it is unused, and each elicitation its own id", async () => {
    const first = await stack.whoami("dave");
    const again = await stack.whoami("dave");
    expect(again).toEqual(first);
    const other = await stack.whoami("erin");
    if (!("elicitationId" in first) || !("elicitationId" in other)) throw new Error("expected elicitations");
    expect(other.elicitationId).not.toBe(first.elicitationId);
    expect(first.elicitationId).not.toContain("vendor");
  });
});
