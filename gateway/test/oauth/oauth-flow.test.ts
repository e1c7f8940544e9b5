// Acceptance of the gateway as its clients' authorization server: the MCP SDK client's own OAuth (discovery, DCR,
// authorization code with PKCE federated to a real company identity provider, token, refresh) reaches a tool through
// the gateway; a machine client registers and uses client_credentials exactly as the SPEC describes.

import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { Browser } from "./support/browser.ts";
import { CLIENT_REDIRECT, MemoryClientProvider } from "./support/client-provider.ts";
import { type CompanyIdp, startCompanyIdp } from "./support/company-idp.ts";
import { freePort, startOAuthGateway } from "./support/oauth-gateway.ts";

let idp: CompanyIdp;
let upstream: Upstream;
let gateway: Awaited<ReturnType<typeof startOAuthGateway>>;

beforeAll(async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  idp = await startCompanyIdp({ gatewayUrl: url, groups: { alice: ["staff", "eng"] } });
  upstream = await startUpstream({ stateful: true });
  gateway = await startOAuthGateway({
    port,
    idpIssuer: idp.issuer,
    upstreamUrl: upstream.url,
    env: { SVC_OAUTH_DEV_KEYS: "true" },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await idp?.close();
});

/** Connects the SDK client with its OAuth provider; resolves to the client, or rejects (e.g. UnauthorizedError). */
async function connect(provider: MemoryClientProvider, server = "tools") {
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/${server}/mcp`), {
    authProvider: provider,
  });
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** Cold start to a connected client: the first connect is refused, the user logs in, the client finishes. */
async function logIn(provider: MemoryClientProvider, user = "alice", server = "tools") {
  await expect(connect(provider, server)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const { landed, visited } = await new Browser().authorize(
    String(provider.authorizationUrl),
    CLIENT_REDIRECT,
    user,
  );
  const code = landed.searchParams.get("code");
  expect(code, `landed at ${landed.href} via ${visited.join("\n")}`).toBeTruthy();
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/${server}/mcp`), {
    authProvider: provider,
  });
  await transport.finishAuth(code as string);
  return connect(provider, server);
}

describe("the MCP SDK client's own OAuth against the gateway's authorization server", () => {
  it("goes from a cold start to tools/call, with the user's groups in an RFC 9068 token for the server", async () => {
    const provider = new MemoryClientProvider();
    const { client } = await logIn(provider);
    const result = await client.callTool({ name: "echo", arguments: { text: "hi" } });
    expect(JSON.stringify(result.content)).toContain("hi");
    await client.close();

    expect(provider.client?.client_id).toBeTruthy();
    const token = provider.stored?.access_token as string;
    expect(decodeProtectedHeader(token).typ).toBe("at+jwt");
    const claims = decodeJwt(token);
    expect(claims.iss).toBe(gateway.url);
    expect(claims.aud).toBe(`${gateway.url}/tools/mcp`);
    expect(claims.sub).toBe("alice");
    expect(claims.groups).toEqual(["staff", "eng"]);
    expect(claims.client_id).toBe(provider.client?.client_id);
  }, 60_000);
});
