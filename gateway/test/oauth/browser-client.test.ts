// A client that runs OAuth inside a web page (the MCP SDK in a browser, a web agent), in Chromium on another origin:
// the public metadata and JWKS are readable from any origin; registration, token and revocation answer their
// preflights and are readable from the origins SVC_ALLOWED_ORIGINS lists, and are refused from any other. Every
// request to the authorization server leaves an access-log line with its request id.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { CHROMIUM_MISSING, launchChromium } from "svc-testkit/chromium";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";

const ALLOWED = "app.test";
const OTHER = "elsewhere.test";

let stack: OAuthStack;
let pages: Server;
let pagePort: number;
const logLines: string[] = [];

beforeAll(async () => {
  // The pages' server: any host name Chromium maps to loopback gets an empty page of that origin.
  pages = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html>"),
  );
  await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
  pagePort = (pages.address() as AddressInfo).port;
  const write = process.stdout.write.bind(process.stdout);
  vi.spyOn(process.stdout, "write").mockImplementation((chunk, ...rest) => {
    // Lines are written in batches: one chunk may hold several.
    if (typeof chunk === "string")
      logLines.push(...chunk.split("\n").filter((l) => l.includes('"msg":"request"')));
    return write(chunk as never, ...(rest as []));
  });
  stack = await startOAuthStack({
    SVC_OAUTH_DEV_KEYS: "true",
    SVC_ALLOWED_ORIGINS: `http://${ALLOWED}:${pagePort}`,
    LOG_LEVEL: "info",
  });
}, 60_000);

afterAll(async () => {
  vi.restoreAllMocks();
  await stack?.close();
  await new Promise<void>((resolve) => pages?.close(() => resolve()));
});

describe("preflights and origins, without a browser", () => {
  const preflight = (path: string, origin: string) =>
    fetch(`${stack.url}${path}`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": path.startsWith("/.well-known") ? "GET" : "POST",
        "access-control-request-headers": "content-type, mcp-protocol-version",
      },
    });

  for (const path of [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/oauth/jwks",
    "/oauth/register",
    "/oauth/token",
    "/oauth/revoke",
  ]) {
    it(`answers the preflight of ${path} for an admitted origin`, async () => {
      const origin = `http://${ALLOWED}:${pagePort}`;
      const response = await preflight(path, origin);
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
      expect(response.headers.get("access-control-allow-headers")?.toLowerCase()).toContain(
        "mcp-protocol-version",
      );
    });
  }

  it("refuses registration, token and revocation from an origin the policy does not admit", async () => {
    for (const path of ["/oauth/register", "/oauth/token", "/oauth/revoke"]) {
      const response = await preflight(path, "https://evil.example");
      expect(response.status).toBe(403);
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      const post = await fetch(`${stack.url}${path}`, {
        method: "POST",
        headers: { origin: "https://evil.example", "content-type": "application/json" },
        body: "{}",
      });
      expect(post.status).toBe(403);
      expect(((await post.json()) as { error_description: string }).error_description).toMatch(
        /SVC_ALLOWED_ORIGINS/,
      );
    }
  });

  it("writes an access-log line with the request id for every OAuth request", async () => {
    const requestId = "oauth-log-check-1";
    const response = await fetch(`${stack.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-request-id": requestId },
      body: "grant_type=authorization_code&code=secret-code&client_id=nobody",
    });
    expect(response.headers.get("x-request-id")).toBe(requestId);
    await response.body?.cancel();
    await expect
      .poll(() => logLines.map((l) => JSON.parse(l)).find((l) => l.request_id === requestId), {
        timeout: 10_000,
      })
      .toMatchObject({ path: "/oauth/token", http_method: "POST", status: response.status });
    expect(logLines.join("")).not.toContain("secret-code");
  });
});

describe.skipIf(CHROMIUM_MISSING !== undefined)(
  `from a page in Chromium${CHROMIUM_MISSING === undefined ? "" : ` (skipped: ${CHROMIUM_MISSING})`}`,
  () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium([
        `--host-resolver-rules=MAP ${ALLOWED} 127.0.0.1, MAP ${OTHER} 127.0.0.1`,
      ]);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    /** What a page on `host` gets from the gateway's OAuth endpoints, each call's status or "blocked". */
    const fromPage = async (host: string) => {
      const page = await browser.newPage();
      try {
        await page.goto(`http://${host}:${pagePort}/`);
        return await page.evaluate(async (gateway) => {
          const status = async (call: Promise<Response>) => {
            try {
              const response = await call;
              await response.text();
              return response.status;
            } catch {
              return "blocked";
            }
          };
          const version = { "MCP-Protocol-Version": "2025-11-25" };
          return {
            metadata: await status(
              fetch(`${gateway}/.well-known/oauth-authorization-server`, { headers: version }),
            ),
            jwks: await status(fetch(`${gateway}/oauth/jwks`)),
            register: await status(
              fetch(`${gateway}/oauth/register`, {
                method: "POST",
                headers: { "content-type": "application/json", ...version },
                body: JSON.stringify({
                  client_name: "web agent",
                  redirect_uris: ["https://app.example/cb"],
                  token_endpoint_auth_method: "none",
                }),
              }),
            ),
            token: await status(
              fetch(`${gateway}/oauth/token`, {
                method: "POST",
                headers: { "content-type": "application/x-www-form-urlencoded", ...version },
                body: "grant_type=authorization_code&code=nope&client_id=nobody",
              }),
            ),
            revoke: await status(
              fetch(`${gateway}/oauth/revoke`, {
                method: "POST",
                headers: { "content-type": "application/x-www-form-urlencoded" },
                body: "token=nope&client_id=nobody",
              }),
            ),
          };
        }, stack.url);
      } finally {
        await page.close();
      }
    };

    it("lets a page on an admitted origin discover, register and reach the token and revocation endpoints", async () => {
      expect(await fromPage(ALLOWED)).toEqual({
        metadata: 200,
        jwks: 200,
        register: 201,
        token: 401,
        revoke: 401,
      });
    }, 60_000);

    it("lets a page on any other origin read only the public metadata", async () => {
      expect(await fromPage(OTHER)).toEqual({
        metadata: 200,
        jwks: 200,
        register: "blocked",
        token: "blocked",
        revoke: "blocked",
      });
    }, 60_000);
  },
);
