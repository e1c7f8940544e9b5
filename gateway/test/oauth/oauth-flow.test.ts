// Acceptance of the gateway as its clients' authorization server: the MCP SDK client's own OAuth (discovery, DCR,
// authorization code with PKCE federated to a real company identity provider, token, refresh) reaches a tool through
// the gateway; a machine client registers and uses client_credentials exactly as the SPEC describes.
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectClient } from "../proxy/support/gateway.ts";
import { Browser } from "./support/browser.ts";
import { CLIENT_REDIRECT, MemoryClientProvider } from "./support/client-provider.ts";
import { MACHINE_CLIENTS_YAML, type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";
import { refresh, register, token } from "./support/oauth-requests.ts";

let stack: OAuthStack;

beforeAll(async () => {
  // The SPEC's machine path (DCR, then client_credentials) is on here, as an operator turns it on.
  stack = await startOAuthStack(undefined, { oauthYaml: MACHINE_CLIENTS_YAML });
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

/** Connects the SDK client with its OAuth provider; resolves to the client, or rejects (e.g. UnauthorizedError). */
async function connect(provider: MemoryClientProvider, server = "tools") {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/${server}/mcp`), {
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
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/${server}/mcp`), {
    authProvider: provider,
  });
  await transport.finishAuth(code as string);
  return connect(provider, server);
}

async function echo(client: Client, text: string): Promise<string> {
  const result = await client.callTool({ name: "echo", arguments: { text } });
  return JSON.stringify(result.content);
}

describe("the MCP SDK client's own OAuth against the gateway's authorization server", () => {
  it("goes from a cold start to tools/call, with the user's groups in an RFC 9068 token for the server", async () => {
    const provider = new MemoryClientProvider();
    const { client } = await logIn(provider);
    expect(await echo(client, "hi")).toContain("hi");
    await client.close();

    expect(provider.client?.client_id).toBeTruthy();
    const accessToken = provider.stored?.access_token as string;
    expect(decodeProtectedHeader(accessToken).typ).toBe("at+jwt");
    const claims = decodeJwt(accessToken);
    expect(claims.iss).toBe(stack.url);
    expect(claims.aud).toBe(`${stack.url}/tools/mcp`);
    expect(claims.sub).toBe("alice");
    expect(claims.groups).toEqual(["staff", "eng"]);
    expect(claims.client_id).toBe(provider.client?.client_id);
  }, 60_000);

  it("refreshes once the access token is no longer accepted, rotating the refresh token", async () => {
    const provider = new MemoryClientProvider();
    (await logIn(provider)).client.close();
    const first = provider.stored;
    expect(first?.refresh_token).toBeTruthy();
    // An access token the gateway refuses, as an expired one is: the SDK client refreshes on the 401 and retries.
    provider.stored = { ...(first as NonNullable<typeof first>), access_token: "expired" };
    const { client } = await connect(provider);
    expect(await echo(client, "after refresh")).toContain("after refresh");
    await client.close();
    expect(provider.stored?.access_token).not.toBe("expired");
    expect(provider.stored?.refresh_token).toBeTruthy();
    expect(provider.stored?.refresh_token).not.toBe(first?.refresh_token);
  }, 60_000);

  it("refuses a revoked refresh token (RFC 7009), and at once the access tokens issued with it", async () => {
    const provider = new MemoryClientProvider();
    const { client } = await logIn(provider);
    const clientId = provider.client?.client_id as string;
    const refreshToken = provider.stored?.refresh_token as string;
    const revoked = await fetch(`${stack.url}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: refreshToken,
        token_type_hint: "refresh_token",
        client_id: clientId,
      }),
    });
    expect(revoked.status).toBe(200);
    // The session open before the revocation is refused on its next call, though the access token has not expired.
    await expect(echo(client, "after revocation")).rejects.toThrow();
    const call = await fetch(`${stack.url}/tools/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.stored?.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(call.status).toBe(401);
    expect(call.headers.get("www-authenticate")).toMatch(/invalid_token/);
    await client.close();
    const answer = await refresh(stack.url, clientId, refreshToken);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_grant");
  }, 60_000);
});

describe("client_credentials through Dynamic Client Registration, as the SPEC's Authentication section describes", () => {
  it("registers with the SPEC's request, gets a token with the client's secret, and calls a tool", async () => {
    const metadata = (await (await fetch(`${stack.url}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
      registration_endpoint: string;
    };
    expect(metadata.issuer).toBe(stack.url);
    expect(typeof metadata.registration_endpoint).toBe("string");
    const registered = await fetch(metadata.registration_endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "nightly-job",
        grant_types: ["client_credentials"],
        response_types: [],
        token_endpoint_auth_method: "client_secret_basic",
      }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string; client_secret: string };
    expect(typeof client.client_id).toBe("string");
    expect(typeof client.client_secret).toBe("string");

    const answer = await token(
      stack.url,
      { grant_type: "client_credentials", resource: `${stack.url}/tools/mcp` },
      { id: client.client_id, secret: client.client_secret },
    );
    expect(answer.status).toBe(200);
    const accessToken = answer.body.access_token as string;
    expect(decodeJwt(accessToken).sub).toBe(client.client_id);
    const { client: mcp } = await connectClient(`${stack.url}/tools/mcp`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(await echo(mcp, "machine")).toContain("machine");
    await mcp.close();
  }, 60_000);

  it("refuses the grant with a wrong secret", async () => {
    const { body } = await register(stack.url, {
      client_name: "job",
      grant_types: ["client_credentials"],
      response_types: [],
      token_endpoint_auth_method: "client_secret_basic",
    });
    const answer = await token(
      stack.url,
      { grant_type: "client_credentials" },
      { id: body.client_id as string, secret: "not-the-secret" },
    );
    expect(answer.status).toBe(401);
    expect(answer.body.error).toBe("invalid_client");
  }, 60_000);
});
