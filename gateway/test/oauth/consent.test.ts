// The consent page as users meet it: where the authorization goes, shown prominently; a warning for plain http to
// another machine and for a client that names itself like a well-known application while its code goes elsewhere;
// the words in the browser's language; everything a client chose escaped; only the scopes actually granted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consentPage } from "../../src/oauth/consent-page.ts";
import { consentTextFor } from "../../src/oauth/consent-text.ts";
import { consentWarnings, destinationOf, KNOWN_CLIENTS } from "../../src/oauth/consent-warnings.ts";
import { Browser } from "./support/browser.ts";
import { type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";
import { authorizeUrl, pkce, register } from "./support/oauth-requests.ts";

let stack: OAuthStack;

beforeAll(async () => {
  stack = await startOAuthStack(undefined, {
    oauthYaml: [
      "  consent:",
      "    known_clients:",
      "      - name: Acme Assistant",
      "        redirects: [assistant.acme.example]",
    ].join("\n"),
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** Registers a client named `name` for `redirectUri` and returns the consent page alice's browser is shown. */
async function consentFor(name: string, redirectUri: string, acceptLanguage?: string): Promise<string> {
  const { status, body } = await register(stack.url, {
    client_name: name,
    redirect_uris: [redirectUri],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
  expect(status, JSON.stringify(body)).toBe(201);
  const url = authorizeUrl(stack.url, {
    client_id: body.client_id as string,
    redirect_uri: redirectUri,
    code_challenge: pkce().challenge,
    code_challenge_method: "S256",
    resource: `${stack.url}/tools/mcp`,
  });
  let consent: string | undefined;
  await new Browser().authorize(url, redirectUri, "alice", {
    ...(acceptLanguage === undefined ? {} : { acceptLanguage }),
    onPage: (page, html) => {
      if (page.pathname.startsWith("/oauth/interaction/") && html.includes("/confirm")) consent = html;
    },
  });
  if (consent === undefined) throw new Error("no consent page was shown");
  return consent;
}

describe("the consent page of a running gateway", () => {
  it("shows where the code goes, and warns when a look-alike of a known client sends it elsewhere", async () => {
    const html = await consentFor("Claude Desktop", "https://evil.example/cb");
    expect(html).toMatch(/<h2 class="destination">[^<]*<strong>evil\.example<\/strong>/);
    expect(html).toMatch(
      /role="alert"[^>]*>[^<]*<strong>Claude Desktop<\/strong>[^<]*<strong>Claude<\/strong>/,
    );
  }, 60_000);

  it("warns for a look-alike spelled with other letters (Cyrillic, digits) and for the operator's own clients", async () => {
    expect(await consentFor("Сlaude", "https://claude.evil.example/cb")).toMatch(/role="alert"/);
    expect(await consentFor("ChatGPT 0fficial", "https://gpt.example/cb")).toMatch(
      /looks like <strong>ChatGPT/,
    );
    expect(await consentFor("Acme Assistant", "https://acme-assistant.example/cb")).toMatch(
      /looks like <strong>Acme Assistant/,
    );
  }, 60_000);

  it("does not warn for a known client at its own hosts, nor for an unrelated name", async () => {
    expect(await consentFor("Claude", "https://claude.ai/api/mcp/auth_callback")).not.toMatch(/role="alert"/);
    expect(await consentFor("Claude Code", "http://localhost:54545/callback")).not.toMatch(/role="alert"/);
    expect(await consentFor("Reporting Bot", "https://reports.example/cb")).not.toMatch(/role="alert"/);
  }, 60_000);

  it("lists only the scope granted, as documented (mcp), not offline_access", async () => {
    const html = await consentFor("Reporting Bot", "https://reports.example/cb");
    expect(html).toContain("<code>mcp</code>");
    expect(html).not.toContain("offline_access");
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server`)).json()) as {
      scopes_supported: string[];
    };
    expect(metadata.scopes_supported).not.toContain("offline_access");
  }, 60_000);

  it("speaks the browser's language", async () => {
    const html = await consentFor("Reporting Bot", "https://reports.example/cb", "de-CH, de;q=0.9, en;q=0.5");
    expect(html).toContain('<html lang="de">');
    expect(html).toContain("Zulassen");
    expect(html).toContain("Wenn Sie zustimmen, geht Ihre Autorisierung an <strong>reports.example</strong>");
  }, 60_000);
});

describe("the page itself", () => {
  const render = (clientName: string, redirectUri: string) => {
    const destination = destinationOf(redirectUri);
    return consentPage({
      uid: "u1",
      clientName,
      clientId: "c<1>",
      user: "alice",
      scopes: ["mcp"],
      resources: ["https://gw.example/tools/mcp"],
      destination,
      warnings: consentWarnings(clientName, destination, KNOWN_CLIENTS),
      text: consentTextFor(undefined),
    });
  };

  it("escapes what the client chose to be called, and posts only to the gateway", () => {
    const html = render('<script>alert(1)</script>"', "https://app.example/cb");
    expect(html).not.toContain("<script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;");
    expect(html).toContain("c&lt;1&gt;");
    expect(html).toContain('action="/oauth/interaction/u1/confirm"');
    expect(html).toContain('action="/oauth/interaction/u1/abort"');
  });

  it("warns for plain http to another machine, and names an app's scheme as the destination", () => {
    expect(render("Tool", "http://tools.example/cb")).toMatch(/plain http/);
    expect(render("Tool", "http://127.0.0.1:9/cb")).not.toMatch(/role="alert"/);
    expect(render("Tool", "com.example.tool:/cb")).toContain("<strong>com.example.tool:</strong>");
  });
});
