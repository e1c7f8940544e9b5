import { createSecretKey } from "node:crypto";
import { SignJWT } from "jose";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configure_auth, configureAuth, JWTAuthConfig } from "../../src/auth/index.ts";
import { AuthConfigError, clearAuthConfiguration } from "../../src/auth/runtime.ts";
import { HS256_SECRET, type IdentityProvider, startIdentityProvider } from "./helpers/identity-provider.ts";
import {
  callWhoami,
  type ProtectedServer,
  postInitialize,
  startProtectedServer,
} from "./helpers/protected-server.ts";

// JWT mechanism against a real OpenID provider: JWKS (RS256 and ES256) and PEM public key.

let idp: IdentityProvider;
let server: ProtectedServer | undefined;

beforeAll(async () => {
  idp = await startIdentityProvider();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  clearAuthConfiguration();
});
afterAll(async () => {
  await idp?.close();
});

const AUDIENCE = "https://api.example.test/mcp";

async function startJwtServer(
  extraEnv: Record<string, string> = {},
  requiredScopes: string[] = ["tools:read"],
) {
  configureAuth(
    new JWTAuthConfig({
      jwks_uri_env_var: "JWKS_URI",
      issuer_env_var: "JWT_ISSUER",
      audience_env_var: "JWT_AUDIENCE",
      required_scopes: requiredScopes,
    }),
  );
  server = await startProtectedServer({
    env: {
      JWKS_URI: `${idp.issuer}/jwks`,
      JWT_ISSUER: idp.issuer,
      JWT_AUDIENCE: `other-api, ${AUDIENCE}`,
      ...extraEnv,
    },
  });
  return server;
}

describe("JWT with a JWKS", () => {
  it("accepts RS256 and ES256 tokens from the provider and exposes them to tools", async () => {
    const { mcpUrl } = await startJwtServer();
    for (const alg of ["RS256", "ES256"] as const) {
      const token = await idp.token({ resource: AUDIENCE, alg });
      const whoami = await callWhoami(mcpUrl, { authorization: `Bearer ${token}` });
      expect(whoami.token).toBe(token);
      expect(whoami.clientId).toBe("svc-test-client");
      expect(whoami.scopes).toContain("tools:read");
    }
  });

  it("answers 401 with resource_metadata without a token, and serves RFC 9728 metadata", async () => {
    const { mcpUrl, url } = await startJwtServer();
    const response = await postInitialize(mcpUrl);
    expect(response.status).toBe(401);
    const challenge = response.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`);
    const metadata = await (await fetch(`${url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(metadata).toMatchObject({ resource: mcpUrl, authorization_servers: [idp.issuer] });
  });

  it("refuses a token for another audience", async () => {
    const { mcpUrl } = await startJwtServer();
    const token = await idp.token({ resource: "https://elsewhere.example.test/mcp" });
    const response = await postInitialize(mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await response.json()).toMatchObject({ error_description: "token aud claim is not accepted" });
  });

  it("refuses a token from another issuer", async () => {
    const { mcpUrl } = await startJwtServer({ JWT_ISSUER: "https://issuer.example.test" });
    const token = await idp.token({ resource: AUDIENCE });
    const response = await postInitialize(mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error_description: "token iss claim is not accepted" });
  });

  it("refuses an expired token signed with the provider's own key", async () => {
    const { mcpUrl } = await startJwtServer();
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ scope: "tools:read", client_id: "svc-test-client" })
      .setProtectedHeader({ alg: "RS256", kid: idp.rsaKey.kid })
      .setIssuer(idp.issuer)
      .setAudience(AUDIENCE)
      .setIssuedAt(now - 3600)
      .setExpirationTime(now - 600)
      .sign(idp.rsaKey.privateKey);
    const response = await postInitialize(mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      error: "invalid_token",
      error_description: "token expired",
    });
  });

  it("answers 403 insufficient_scope when a required scope is missing", async () => {
    const { mcpUrl } = await startJwtServer({}, ["tools:read", "admin"]);
    const token = await idp.token({ resource: AUDIENCE, scope: "tools:read" });
    const response = await postInitialize(mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(403);
    const challenge = response.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="tools:read admin"');
    expect(challenge).toContain("resource_metadata=");
  });

  it("refuses HS256 tokens (issued by the provider) and alg none", async () => {
    const { mcpUrl } = await startJwtServer();
    const hs256 = await idp.token({ resource: AUDIENCE, alg: "HS256" });
    const refused = await postInitialize(mcpUrl, { authorization: `Bearer ${hs256}` });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({
      error_description: "token signing algorithm is not accepted",
    });

    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${encode({ alg: "none", typ: "JWT" })}.${encode({
      iss: idp.issuer,
      aud: AUDIENCE,
      scope: "tools:read",
      exp: now + 300,
    })}.`;
    const none = await postInitialize(mcpUrl, { authorization: `Bearer ${unsigned}` });
    expect(none.status).toBe(401);
  });

  it("refuses a malformed Authorization header", async () => {
    const { mcpUrl } = await startJwtServer();
    const response = await postInitialize(mcpUrl, { authorization: "Basic dXNlcjpwYXNz" });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });
});

describe("JWT with a PEM public key", () => {
  it("accepts tokens signed by the key and refuses HS256 made with the public key as secret", async () => {
    configureAuth(
      new JWTAuthConfig({
        public_key_env_var: "JWT_PUBLIC_KEY",
        issuer_env_var: "JWT_ISSUER",
        audience_env_var: "JWT_AUDIENCE",
      }),
    );
    server = await startProtectedServer({
      env: { JWT_PUBLIC_KEY: idp.rsaKey.publicPem, JWT_ISSUER: idp.issuer, JWT_AUDIENCE: AUDIENCE },
    });
    const token = await idp.token({ resource: AUDIENCE, alg: "RS256" });
    expect((await callWhoami(server.mcpUrl, { authorization: `Bearer ${token}` })).token).toBe(token);

    // The classic key-confusion attack: HMAC keyed with the public key PEM.
    const forged = await new SignJWT({ scope: "tools:read" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(idp.issuer)
      .setAudience(AUDIENCE)
      .setExpirationTime("5m")
      .sign(createSecretKey(Buffer.from(idp.rsaKey.publicPem)));
    expect((await postInitialize(server.mcpUrl, { authorization: `Bearer ${forged}` })).status).toBe(401);
    void HS256_SECRET;
  });

  it("accepts a PEM written on one line with literal \\n (as .env files store it), via configure_auth", async () => {
    configure_auth(
      new JWTAuthConfig({
        public_key_env_var: "JWT_PUBLIC_KEY",
        issuer_env_var: "JWT_ISSUER",
        audience: AUDIENCE,
      }),
    );
    const oneLine = idp.rsaKey.publicPem.trim().replaceAll("\n", "\\n");
    server = await startProtectedServer({ env: { JWT_PUBLIC_KEY: oneLine, JWT_ISSUER: idp.issuer } });
    const token = await idp.token({ resource: AUDIENCE });
    expect((await callWhoami(server.mcpUrl, { authorization: `Bearer ${token}` })).clientId).toBe(
      "svc-test-client",
    );
  });
});

describe("broken JWT configuration stops the start", () => {
  const base = { issuer_env_var: "JWT_ISSUER", audience_env_var: "JWT_AUDIENCE" };

  it.each([
    [
      "an unset JWKS_URI",
      { jwks_uri_env_var: "JWKS_URI", ...base },
      { JWT_ISSUER: "x", JWT_AUDIENCE: "a" },
      "JWKS_URI",
    ],
    [
      "an unset JWT_ISSUER",
      { jwks_uri_env_var: "JWKS_URI", ...base },
      { JWKS_URI: "http://127.0.0.1:9/jwks", JWT_AUDIENCE: "a" },
      "JWT_ISSUER",
    ],
    [
      "an unset JWT_AUDIENCE",
      { jwks_uri_env_var: "JWKS_URI", ...base },
      { JWKS_URI: "http://127.0.0.1:9/jwks", JWT_ISSUER: "x" },
      "JWT_AUDIENCE",
    ],
    [
      "a JWKS_URI that is not a URL",
      { jwks_uri_env_var: "JWKS_URI", ...base },
      { JWKS_URI: "not a url", JWT_ISSUER: "x", JWT_AUDIENCE: "a" },
      "JWKS_URI",
    ],
    [
      "an unreachable JWKS",
      { jwks_uri_env_var: "JWKS_URI", ...base },
      { JWKS_URI: "http://127.0.0.1:9/jwks", JWT_ISSUER: "x", JWT_AUDIENCE: "a" },
      "JWKS_URI",
    ],
    [
      "a JWT_PUBLIC_KEY that is not PEM",
      { public_key_env_var: "JWT_PUBLIC_KEY", ...base },
      { JWT_PUBLIC_KEY: "abc", JWT_ISSUER: "x", JWT_AUDIENCE: "a" },
      "JWT_PUBLIC_KEY",
    ],
    ["no key source at all", { ...base }, { JWT_ISSUER: "x", JWT_AUDIENCE: "a" }, "JWTAuthConfig.jwks_uri"],
  ])("%s", async (_name, fields, env, field) => {
    configureAuth(new JWTAuthConfig(fields));
    const start = startProtectedServer({ env });
    await expect(start).rejects.toBeInstanceOf(AuthConfigError);
    await expect(start).rejects.toMatchObject({ field });
  });

  it("refuses a private key in JWT_PUBLIC_KEY", async () => {
    configureAuth(new JWTAuthConfig({ public_key_env_var: "JWT_PUBLIC_KEY", ...base }));
    const pem = idp.rsaKey.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    await expect(
      startProtectedServer({ env: { JWT_PUBLIC_KEY: pem, JWT_ISSUER: "x", JWT_AUDIENCE: "a" } }),
    ).rejects.toThrow(/JWT_PUBLIC_KEY: must hold a PEM public key/);
  });

  it("refuses a JWKS over plain http off loopback, outside development", async () => {
    configureAuth(new JWTAuthConfig({ jwks_uri_env_var: "JWKS_URI", ...base }));
    await expect(
      startProtectedServer({
        env: { JWKS_URI: "http://idp.example.test/jwks", JWT_ISSUER: "x", JWT_AUDIENCE: "a" },
      }),
    ).rejects.toThrow(/^JWKS_URI: "http:\/\/idp.example.test\/jwks" must use https/);
  });

  it("refuses a JWKS endpoint that serves something else", async () => {
    configureAuth(new JWTAuthConfig({ jwks_uri: `${idp.issuer}/.well-known/openid-configuration`, ...base }));
    await expect(startProtectedServer({ env: { JWT_ISSUER: "x", JWT_AUDIENCE: "a" } })).rejects.toThrow(
      /JWTAuthConfig.jwks_uri: could not load a JWKS/,
    );
  });
});
