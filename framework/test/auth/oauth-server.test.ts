import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auth, extractResourceMetadataUrl } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ApprovalHook, configureAuth, OAuthServerConfig } from "../../src/auth/index.ts";
import { clearAuthConfiguration } from "../../src/auth/runtime.ts";
import { followAuthorization, MemoryOAuthClient } from "./helpers/oauth-client.ts";
import {
  type ProtectedServer,
  postInitialize,
  startProtectedServer,
  type Whoami,
} from "./helpers/protected-server.ts";

// The built-in OAuth server, driven by the MCP SDK client's own OAuth flow (auth()): discovery, dynamic
// registration, authorization with PKCE, token, call, refresh, revoke, refused.

const SIGNING_KEY = generateKeyPairSync("ec", { namedCurve: "P-256" })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();
const approveAsAlice: ApprovalHook = () => ({ approved: true, subject: "alice" });

let dataDir: string;
let server: ProtectedServer | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "svc-oauth-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  clearAuthConfiguration();
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function startOAuthServer(
  options: { approve?: ApprovalHook; env?: Record<string, string>; dir?: string } = {},
) {
  clearAuthConfiguration();
  configureAuth(
    new OAuthServerConfig({
      valid_scopes: ["tools:read", "tools:write"],
      default_scopes: ["tools:read"],
      required_scopes: ["tools:read"],
      approve: options.approve ?? approveAsAlice,
    }),
  );
  server = await startProtectedServer({
    env: options.env ?? { OAUTH_SIGNING_KEY: SIGNING_KEY },
    dataDir: options.dir ?? dataDir,
  });
  return server;
}

async function whoami(mcpUrl: string, client: MemoryOAuthClient): Promise<Whoami> {
  const mcp = new Client({ name: "oauth-test", version: "1.0.0" });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: client }));
  try {
    const result = await mcp.callTool({ name: "whoami", arguments: {} });
    return JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}") as Whoami;
  } finally {
    await mcp.close();
  }
}

/** Discovery from the 401, registration and authorization with PKCE, then the code exchange. */
async function authorize(mcpUrl: string, client: MemoryOAuthClient) {
  const challenge = await postInitialize(mcpUrl);
  expect(challenge.status).toBe(401);
  const resourceMetadataUrl = extractResourceMetadataUrl(challenge);
  expect(resourceMetadataUrl).toBeDefined();
  expect(
    await auth(client, { serverUrl: mcpUrl, ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}) }),
  ).toBe("REDIRECT");
  const authorizationUrl = client.authorizationUrl as URL;
  expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
  const callback = await followAuthorization(authorizationUrl);
  const code = callback.get("code");
  expect(code).toBeTruthy();
  expect(callback.get("iss")).toBe(new URL(mcpUrl).origin);
  expect(await auth(client, { serverUrl: mcpUrl, authorizationCode: code as string })).toBe("AUTHORIZED");
}

async function revoke(baseUrl: string, client: MemoryOAuthClient, token: string): Promise<Response> {
  const info = client.information as { client_id: string; client_secret: string };
  return fetch(`${baseUrl}/revoke`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${info.client_id}:${info.client_secret}`).toString("base64")}`,
    },
    body: new URLSearchParams({ token }),
  });
}

/** A refresh_token grant with the client's Basic credentials. */
function refreshDirect(baseUrl: string, client: MemoryOAuthClient, refreshToken: string): Promise<Response> {
  const info = client.information as { client_id: string; client_secret: string };
  return fetch(`${baseUrl}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${info.client_id}:${info.client_secret}`).toString("base64")}`,
    },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken }),
  });
}

describe("built-in OAuth server, end to end with the MCP SDK client", () => {
  it("discovery → registration → authorize (PKCE) → token → call → refresh → revoke → refused", async () => {
    const { mcpUrl, url } = await startOAuthServer();
    const client = new MemoryOAuthClient();
    await authorize(mcpUrl, client);

    const first = client.savedTokens;
    expect(first?.refresh_token).toBeTruthy();
    expect(first?.scope).toBe("tools:read tools:write");
    const me = await whoami(mcpUrl, client);
    expect(me.token).toBe(first?.access_token);
    expect(me.clientId).toBe((client.information as { client_id: string }).client_id);

    // Refresh: auth() with a stored refresh token rotates it.
    expect(await auth(client, { serverUrl: mcpUrl })).toBe("AUTHORIZED");
    const second = client.savedTokens;
    expect(second?.access_token).not.toBe(first?.access_token);
    expect(second?.refresh_token).not.toBe(first?.refresh_token);
    expect((await whoami(mcpUrl, client)).token).toBe(second?.access_token);

    // Revoking the refresh token revokes the whole grant, access token included.
    expect((await revoke(url, client, second?.refresh_token as string)).status).toBe(200);
    const refused = await postInitialize(mcpUrl, { authorization: `Bearer ${second?.access_token}` });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({
      error: "invalid_token",
      error_description: "token has been revoked",
    });
    const refresh = await refreshDirect(url, client, second?.refresh_token as string);
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: "invalid_grant" });
    // The SDK client, refused a refresh, falls back to asking the user again.
    client.savedTokens = second;
    expect(await auth(client, { serverUrl: mcpUrl })).toBe("REDIRECT");
  });

  it("revokes a single access token by its jti", async () => {
    const { mcpUrl, url } = await startOAuthServer();
    const client = new MemoryOAuthClient();
    await authorize(mcpUrl, client);
    const token = client.savedTokens?.access_token as string;
    expect((await revoke(url, client, token)).status).toBe(200);
    expect((await postInitialize(mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(401);
    // Unknown tokens are answered 200 too (RFC 7009 §2.2).
    expect((await revoke(url, client, "not-a-token")).status).toBe(200);
  });

  it("treats replay of a rotated refresh token as theft and revokes the grant", async () => {
    const { mcpUrl } = await startOAuthServer();
    const client = new MemoryOAuthClient();
    await authorize(mcpUrl, client);
    const stolen = client.savedTokens as NonNullable<typeof client.savedTokens>;
    await auth(client, { serverUrl: mcpUrl });
    const current = client.savedTokens as NonNullable<typeof client.savedTokens>;
    const replay = await refreshDirect(mcpUrl.replace(/\/mcp$/, ""), client, stolen.refresh_token as string);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    // The thief's replay also burnt the legitimate chain.
    const legit = await refreshDirect(mcpUrl.replace(/\/mcp$/, ""), client, current.refresh_token as string);
    expect(legit.status).toBe(400);
    expect((await postInitialize(mcpUrl, { authorization: `Bearer ${current.access_token}` })).status).toBe(
      401,
    );
  });

  it("keeps client registrations across a restart, without plain secrets on disk", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-oauth-restart-"));
    try {
      const client = new MemoryOAuthClient();
      const before = await startOAuthServer({ dir });
      await authorize(before.mcpUrl, client);
      await before.close();
      server = undefined;

      const stored = await readFile(join(dir, "oauth", "clients.json"), "utf8");
      const secret = (client.information as { client_secret: string }).client_secret;
      expect(stored).not.toContain(secret);
      expect(stored).toContain("client_secret_sha256");
      expect(await readFile(join(dir, "oauth", "grants.json"), "utf8")).not.toContain(
        client.savedTokens?.refresh_token as string,
      );

      const after = await startOAuthServer({ dir });
      // Same registration (new origin, so the SDK rebinds it): authorize again without registering.
      const registered = client.information as { client_id: string };
      client.information = { ...registered, issuer: new URL(after.url).origin } as never;
      client.savedTokens = undefined;
      const challenge = await postInitialize(after.mcpUrl);
      const resourceMetadataUrl = extractResourceMetadataUrl(challenge) as URL;
      expect(await auth(client, { serverUrl: after.mcpUrl, resourceMetadataUrl })).toBe("REDIRECT");
      const code = (await followAuthorization(client.authorizationUrl as URL)).get("code") as string;
      expect(await auth(client, { serverUrl: after.mcpUrl, authorizationCode: code })).toBe("AUTHORIZED");
      expect((client.information as { client_id: string }).client_id).toBe(registered.client_id);
      expect((await whoami(after.mcpUrl, client)).clientId).toBe(registered.client_id);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
