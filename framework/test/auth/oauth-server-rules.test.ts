import { createHash, generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type ApprovalHook,
  AuthConfigError,
  configureAuth,
  OAuthServerConfig,
  type OAuthServerConfigInput,
} from "../../src/auth/index.ts";
import { clearAuthConfiguration } from "../../src/auth/runtime.ts";
import {
  callWhoami,
  type ProtectedServer,
  postInitialize,
  startProtectedServer,
} from "./helpers/protected-server.ts";

// The OAuth server's rules, request by request, and its start-up checks.

const SIGNING_KEY = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();
const REDIRECT = "http://127.0.0.1:1/callback";

let dataDir: string;
let server: ProtectedServer | undefined;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "svc-oauth-rules-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  clearAuthConfiguration();
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function start(
  fields: OAuthServerConfigInput = {},
  env: Record<string, string> = { OAUTH_SIGNING_KEY: SIGNING_KEY },
  dir = dataDir,
) {
  configureAuth(
    new OAuthServerConfig({
      valid_scopes: ["tools:read", "tools:write"],
      default_scopes: ["tools:read"],
      approve: () => ({ approved: true, subject: "bob" }),
      ...fields,
    }),
  );
  server = await startProtectedServer({ env, dataDir: dir });
  return server;
}

async function register(url: string, metadata: Record<string, unknown> = {}) {
  const response = await fetch(`${url}/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT], client_name: "rules", ...metadata }),
  });
  return { response, body: (await response.json()) as Record<string, string> };
}

function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

async function authorizeRaw(url: string, params: Record<string, string>) {
  const response = await fetch(`${url}/authorize?${new URLSearchParams(params)}`, { redirect: "manual" });
  const location = response.headers.get("location");
  return { response, query: location ? new URL(location).searchParams : undefined };
}

function tokenRequest(url: string, client: Record<string, string>, params: Record<string, string>) {
  return fetch(`${url}/token`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString("base64")}`,
    },
    body: new URLSearchParams(params),
  });
}

/** Registers a client and runs /authorize with PKCE; returns the code and verifier. */
async function codeFor(url: string) {
  const { body: client } = await register(url);
  const { verifier, challenge } = pkce();
  const { query } = await authorizeRaw(url, {
    response_type: "code",
    client_id: client.client_id as string,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "s-1",
  });
  return { client, verifier, code: query?.get("code") as string };
}

describe("metadata", () => {
  it("publishes RFC 8414 metadata and a public-only JWKS", async () => {
    const { url } = await start({ service_documentation_url: "https://docs.example.test/" });
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata).toMatchObject({
      issuer: url,
      authorization_endpoint: `${url}/authorize`,
      token_endpoint: `${url}/token`,
      registration_endpoint: `${url}/register`,
      revocation_endpoint: `${url}/revoke`,
      jwks_uri: `${url}/.well-known/jwks.json`,
      code_challenge_methods_supported: ["S256"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      scopes_supported: ["tools:read", "tools:write"],
      service_documentation: "https://docs.example.test/",
    });
    const jwks = (await (await fetch(`${url}/.well-known/jwks.json`)).json()) as {
      keys: Array<Record<string, string>>;
    };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", alg: "RS256", use: "sig" });
    expect(jwks.keys[0]?.d).toBeUndefined();
  });

  it("answers CORS preflights of browser-based clients, but not for /authorize", async () => {
    const { url } = await start();
    const preflight = (path: string) =>
      fetch(`${url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "https://app.example.test",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type",
        },
      });
    for (const path of ["/register", "/token", "/revoke", "/.well-known/oauth-authorization-server"]) {
      const response = await preflight(path);
      expect(response.status, path).toBe(204);
      expect(response.headers.get("access-control-allow-origin"), path).toBe("*");
    }
    expect((await preflight("/authorize")).headers.get("access-control-allow-origin")).toBeNull();
    const metadata = await fetch(`${url}/.well-known/oauth-protected-resource/mcp`, {
      headers: { origin: "https://app.example.test" },
    });
    expect(metadata.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("takes the public URL from base_url_env_var", async () => {
    const { url } = await start(
      { base_url_env_var: "OAUTH_BASE_URL" },
      {
        OAUTH_SIGNING_KEY: SIGNING_KEY,
        OAUTH_BASE_URL: "http://127.0.0.1:7777",
      },
    );
    const metadata = await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata).toMatchObject({
      issuer: "http://127.0.0.1:7777",
      token_endpoint: "http://127.0.0.1:7777/token",
    });
    const resource = await (await fetch(`${url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(resource).toMatchObject({ resource: "http://127.0.0.1:7777/mcp" });
  });
});

describe("dynamic client registration", () => {
  it.each([
    ["an http redirect off loopback", { redirect_uris: ["http://evil.example/cb"] }, /must use https/],
    ["a javascript: redirect", { redirect_uris: ["javascript:alert(1)"] }, /javascript/],
    ["no redirect URI", { redirect_uris: [] }, /at least one/],
    ["an unknown scope", { scope: "tools:read root" }, /scope "root"/],
    ["client_credentials", { grant_types: ["client_credentials"] }, /grant_types/],
    [
      "an unknown auth method",
      { token_endpoint_auth_method: "private_key_jwt" },
      /token_endpoint_auth_method/,
    ],
  ])("refuses %s", async (_name, metadata, message) => {
    const { url } = await start();
    const { response, body } = await register(url, metadata);
    expect(response.status).toBe(400);
    expect(body.error).toBe("invalid_client_metadata");
    expect(body.error_description).toMatch(message);
  });

  it("registers a public client without a secret", async () => {
    const { url } = await start();
    const { response, body } = await register(url, { token_endpoint_auth_method: "none" });
    expect(response.status).toBe(201);
    expect(body.client_secret).toBeUndefined();
    expect(body.client_secret_sha256).toBeUndefined();
  });
});

describe("authorization endpoint", () => {
  it("requires PKCE with S256", async () => {
    const { url } = await start();
    const { body: client } = await register(url);
    const base = {
      response_type: "code",
      client_id: client.client_id as string,
      redirect_uri: REDIRECT,
      state: "x",
    };
    const variants: Record<string, string>[] = [
      {},
      { code_challenge: pkce().challenge, code_challenge_method: "plain" },
    ];
    for (const extra of variants) {
      const { response, query } = await authorizeRaw(url, { ...base, ...extra });
      expect(response.status).toBe(302);
      expect(query?.get("error")).toBe("invalid_request");
      expect(query?.get("state")).toBe("x");
    }
  });

  it("never redirects to an unregistered URI or for an unknown client", async () => {
    const { url } = await start();
    const { body: client } = await register(url);
    const { challenge } = pkce();
    const common = { response_type: "code", code_challenge: challenge, code_challenge_method: "S256" };
    const wrongUri = await authorizeRaw(url, {
      ...common,
      client_id: client.client_id as string,
      redirect_uri: "http://127.0.0.1:2/elsewhere",
    });
    expect(wrongUri.response.status).toBe(400);
    const unknown = await authorizeRaw(url, { ...common, client_id: "nobody", redirect_uri: REDIRECT });
    expect(unknown.response.status).toBe(400);
  });

  it("refuses unknown scopes and foreign resources", async () => {
    const { url } = await start();
    const { body: client } = await register(url);
    const params = {
      response_type: "code",
      client_id: client.client_id as string,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
    };
    expect((await authorizeRaw(url, { ...params, scope: "root" })).query?.get("error")).toBe("invalid_scope");
    const { body: narrow } = await register(url, { scope: "tools:read" });
    const beyond = await authorizeRaw(url, {
      ...params,
      client_id: narrow.client_id as string,
      scope: "tools:write",
    });
    expect(beyond.query?.get("error")).toBe("invalid_scope");
    expect(
      (await authorizeRaw(url, { ...params, resource: "https://other.example/mcp" })).query?.get("error"),
    ).toBe("invalid_target");
  });

  it("passes denial and custom pages of the approval hook through", async () => {
    let answer: Awaited<ReturnType<ApprovalHook>> = { approved: false, reason: "not today" };
    const { url } = await start({ approve: () => answer });
    const { body: client } = await register(url);
    const params = {
      response_type: "code",
      client_id: client.client_id as string,
      code_challenge: pkce().challenge,
      code_challenge_method: "S256",
    };
    const denied = await authorizeRaw(url, params);
    expect(denied.query?.get("error")).toBe("access_denied");
    expect(denied.query?.get("error_description")).toBe("not today");
    answer = new Response("<form>consent</form>", { headers: { "content-type": "text/html" } });
    const page = await authorizeRaw(url, params);
    expect(page.response.status).toBe(200);
    expect(await page.response.text()).toContain("consent");
  });
});

describe("token endpoint", () => {
  it("issues an RFC 9068 token for the resource, with default scopes and the approved subject", async () => {
    const { url, mcpUrl } = await start();
    const { client, verifier, code } = await codeFor(url);
    const response = await tokenRequest(url, client, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: mcpUrl,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const tokens = (await response.json()) as Record<string, string>;
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "tools:read" });
    const claims = decodeJwt(tokens.access_token as string);
    expect(claims).toMatchObject({ iss: url, aud: mcpUrl, sub: "bob", client_id: client.client_id });
    expect((await callWhoami(mcpUrl, { authorization: `Bearer ${tokens.access_token}` })).scopes).toEqual([
      "tools:read",
    ]);
  });

  it("refuses a wrong code_verifier, and a second use of a code revokes the first tokens", async () => {
    const { url, mcpUrl } = await start();
    const wrong = await codeFor(url);
    const refused = await tokenRequest(url, wrong.client, {
      grant_type: "authorization_code",
      code: wrong.code,
      code_verifier: pkce().verifier,
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_grant" });

    const { client, verifier, code } = await codeFor(url);
    const params = { grant_type: "authorization_code", code, code_verifier: verifier };
    const first = (await (await tokenRequest(url, client, params)).json()) as Record<string, string>;
    const again = await tokenRequest(url, client, params);
    expect(again.status).toBe(400);
    expect((await postInitialize(mcpUrl, { authorization: `Bearer ${first.access_token}` })).status).toBe(
      401,
    );
  });

  it("refuses a wrong client secret with 401 invalid_client", async () => {
    const { url } = await start();
    const { client, verifier, code } = await codeFor(url);
    const response = await tokenRequest(
      url,
      { ...client, client_secret: "guess" },
      {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
      },
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid_client" });
  });

  it("refuses other grant types", async () => {
    const { url } = await start();
    const { body: client } = await register(url);
    const response = await tokenRequest(url, client, { grant_type: "client_credentials" });
    expect(await response.json()).toMatchObject({ error: "unsupported_grant_type" });
  });
});

describe("start-up checks", () => {
  it("refuses to start outside development without OAUTH_SIGNING_KEY", async () => {
    await expect(start({}, {})).rejects.toMatchObject({
      name: "AuthConfigError",
      field: "OAUTH_SIGNING_KEY",
    });
  });

  it("refuses an invalid signing key, naming the variable", async () => {
    await expect(
      start({}, { OAUTH_SIGNING_KEY: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----" }),
    ).rejects.toThrow(/^OAUTH_SIGNING_KEY: is not a valid PEM private key/);
  });

  it("requires an approval hook outside development", async () => {
    configureAuth(new OAuthServerConfig({}));
    await expect(
      startProtectedServer({ env: { OAUTH_SIGNING_KEY: SIGNING_KEY }, dataDir }),
    ).rejects.toMatchObject({
      field: "OAuthServerConfig.approve",
    });
  });

  it("in development runs with a temporary key and auto-approval, and says so", async () => {
    configureAuth(new OAuthServerConfig({ valid_scopes: ["tools:read"] }));
    server = await startProtectedServer({ env: { NODE_ENV: "development" }, dataDir });
    const warnings = server.layer.warnings.join("\n");
    expect(warnings).toMatch(/OAUTH_SIGNING_KEY is not set/);
    expect(warnings).toMatch(/approved as "dev-user"/);
    const { code, client, verifier } = await codeFor(server.url);
    const tokens = (await (
      await tokenRequest(server.url, client, {
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
      })
    ).json()) as Record<string, string>;
    expect(decodeJwt(tokens.access_token as string).sub).toBe("dev-user");
  });

  it("refuses a corrupt clients file, naming it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-oauth-corrupt-"));
    try {
      await mkdir(join(dir, "oauth"));
      await writeFile(join(dir, "oauth", "clients.json"), "{ not json");
      await expect(start({}, { OAUTH_SIGNING_KEY: SIGNING_KEY }, dir)).rejects.toThrow(
        /clients\.json: is not a valid state file/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a base URL variable holding no URL, and scopes outside valid_scopes", async () => {
    await expect(
      start(
        { base_url_env_var: "OAUTH_BASE_URL" },
        { OAUTH_SIGNING_KEY: SIGNING_KEY, OAUTH_BASE_URL: "nope" },
      ),
    ).rejects.toThrow(/^OAUTH_BASE_URL: "nope" is not a valid URL/);
    expect(() => new OAuthServerConfig({ valid_scopes: ["a"], required_scopes: ["b"] })).toThrow(
      /OAuthServerConfig.required_scopes: "b" is not in valid_scopes/,
    );
    expect(() => new OAuthServerConfig({ access_token_ttl: 10 })).toThrow(AuthConfigError);
  });
});
