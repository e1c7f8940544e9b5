// The login as a user's browser does it: Debian's Chromium (cookie paths, SameSite, cross-site navigations all
// real) goes from the MCP SDK client's authorization URL through the company identity provider's sign-in (on ::1,
// another site than the gateway on 127.0.0.1) and the gateway's consent page to the client's loopback redirect; the
// client then exchanges the code and calls a tool through the gateway.
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser } from "playwright-core";
import { CHROMIUM_MISSING, launchChromium } from "svc-testkit/chromium";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logInWithChromium } from "./support/chromium-user.ts";
import { MemoryClientProvider } from "./support/client-provider.ts";
import { startLoopbackRedirect } from "./support/loopback-redirect.ts";
import { type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";

describe.skipIf(CHROMIUM_MISSING !== undefined)(
  `a login in a real browser${CHROMIUM_MISSING === undefined ? "" : ` (skipped: ${CHROMIUM_MISSING})`}`,
  () => {
    let stack: OAuthStack;
    let browser: Browser;

    beforeAll(async () => {
      [stack, browser] = await Promise.all([
        startOAuthStack({ SVC_OAUTH_DEV_KEYS: "true" }, { idpHost: "::1" }),
        launchChromium(),
      ]);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await stack?.close();
    });

    const connect = async (provider: MemoryClientProvider) => {
      const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/tools/mcp`), {
        authProvider: provider,
      });
      const client = new Client({ name: "chromium-login-test", version: "1.0.0" });
      await client.connect(transport);
      return { client, transport };
    };

    it("goes from the client's authorization URL, through the identity provider and consent, to a tool call", async () => {
      const redirect = await startLoopbackRedirect();
      const context = await browser.newContext();
      try {
        const provider = new MemoryClientProvider(redirect.uri);
        await expect(connect(provider)).rejects.toBeInstanceOf(UnauthorizedError);
        const page = await context.newPage();
        const login = await logInWithChromium(page, String(provider.authorizationUrl), {
          user: "alice",
          gateway: stack.url,
          arrived: redirect.arrived,
        });
        expect(login.consentText).toMatch(/alice/);
        const arrived = await redirect.arrived;
        const code = arrived.searchParams.get("code");
        expect(code, arrived.href).toBeTruthy();

        // The interaction cookie the browser kept: scoped so /oauth/callback gets it, SameSite=Lax, HttpOnly.
        const interaction = login.cookiesAtSignIn?.find((c) => c.name === "svc_oauth_interaction");
        expect(interaction?.path).toBe("/oauth/");
        expect(interaction?.sameSite).toBe("Lax");
        expect(interaction?.httpOnly).toBe(true);

        await new StreamableHTTPClientTransport(new URL(`${stack.url}/tools/mcp`), {
          authProvider: provider,
        }).finishAuth(code as string);
        const { client } = await connect(provider);
        const result = await client.callTool({ name: "echo", arguments: { text: "from chromium" } });
        expect(JSON.stringify(result.content)).toContain("from chromium");
        await client.close();
      } finally {
        await context.close();
        await redirect.close();
      }
    }, 60_000);

    it("sends the user back to the client with access_denied when they press Deny", async () => {
      const redirect = await startLoopbackRedirect();
      const context = await browser.newContext();
      try {
        const provider = new MemoryClientProvider(redirect.uri);
        await expect(connect(provider)).rejects.toBeInstanceOf(UnauthorizedError);
        await logInWithChromium(await context.newPage(), String(provider.authorizationUrl), {
          user: "alice",
          gateway: stack.url,
          arrived: redirect.arrived,
          deny: true,
        });
        const arrived = await redirect.arrived;
        expect(arrived.searchParams.get("error")).toBe("access_denied");
        expect(arrived.searchParams.get("code")).toBeNull();
      } finally {
        await context.close();
        await redirect.close();
      }
    }, 60_000);
  },
);
