import { afterEach, describe, expect, it } from "vitest";
import {
  AuthConfigError,
  configure_api_key,
  configureApiKey,
  configureAuth,
  JWTAuthConfig,
  StaticTokenConfig,
} from "../../src/auth/index.ts";
import { clearAuthConfiguration } from "../../src/auth/runtime.ts";
import {
  callWhoami,
  type ProtectedServer,
  postInitialize,
  startProtectedServer,
} from "./helpers/protected-server.ts";

let server: ProtectedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  clearAuthConfiguration();
});

const TOKENS = {
  "dev-token-reader-0123456789": { client_id: "reader", scopes: ["tools:read"] },
  "dev-token-admin-0123456789": { client_id: "admin", scopes: ["tools:read", "admin"] },
};

describe("static development tokens", () => {
  it("accepts a listed token with its client_id and scopes, and warns at start", async () => {
    configureAuth(new StaticTokenConfig({ tokens: TOKENS, required_scopes: ["tools:read"] }));
    server = await startProtectedServer();
    expect(server.layer.warnings.join("\n")).toMatch(/static development token\(s\)/);
    const whoami = await callWhoami(server.mcpUrl, { authorization: "Bearer dev-token-admin-0123456789" });
    expect(whoami).toMatchObject({ token: "dev-token-admin-0123456789", clientId: "admin" });
    expect(whoami.scopes).toEqual(["tools:read", "admin"]);
  });

  it("refuses unknown tokens, prefixes of tokens, and missing tokens", async () => {
    configureAuth(new StaticTokenConfig({ tokens: TOKENS }));
    server = await startProtectedServer();
    for (const token of ["nope", "dev-token-admin", "dev-token-admin-01234567890"]) {
      const response = await postInitialize(server.mcpUrl, { authorization: `Bearer ${token}` });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    const none = await postInitialize(server.mcpUrl);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  it("answers 403 insufficient_scope when the token lacks a required scope", async () => {
    configureAuth(new StaticTokenConfig({ tokens: TOKENS, required_scopes: ["admin"] }));
    server = await startProtectedServer();
    const response = await postInitialize(server.mcpUrl, {
      authorization: "Bearer dev-token-reader-0123456789",
    });
    expect(response.status).toBe(403);
    const challenge = response.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="admin"');
    expect(
      (await callWhoami(server.mcpUrl, { authorization: "Bearer dev-token-admin-0123456789" })).clientId,
    ).toBe("admin");
  });

  it("rejects a config without tokens, naming the field", () => {
    expect(() => new StaticTokenConfig({ tokens: {} })).toThrow(
      /StaticTokenConfig.tokens: at least one token/,
    );
  });
});

describe("API-key pass-through", () => {
  it("validates nothing and hands the key, prefix stripped, to tools", async () => {
    configureApiKey("X-Upstream-Key", "Token ");
    server = await startProtectedServer();
    expect(await callWhoami(server.mcpUrl, { "x-upstream-key": "Token sk-live-123" })).toMatchObject({
      apiKey: "sk-live-123",
    });
    // No key: the request still reaches the tool, which sees nothing.
    expect(await callWhoami(server.mcpUrl)).toEqual({});
    expect((await postInitialize(server.mcpUrl)).status).toBe(200);
  });

  it("works through the snake_case alias, and beside token auth on another header", async () => {
    configure_api_key("X-Api-Key");
    configureAuth(new StaticTokenConfig({ tokens: TOKENS }));
    server = await startProtectedServer();
    const whoami = await callWhoami(server.mcpUrl, {
      authorization: "Bearer dev-token-reader-0123456789",
      "x-api-key": "k-1",
    });
    expect(whoami).toMatchObject({ apiKey: "k-1", token: "dev-token-reader-0123456789", clientId: "reader" });
  });

  it("refuses Authorization as the key header when token auth uses it", async () => {
    configureApiKey("Authorization", "Bearer ");
    configureAuth(new StaticTokenConfig({ tokens: TOKENS }));
    await expect(startProtectedServer()).rejects.toThrow(/configureApiKey.header_name/);
  });

  it("refuses a header name that is not one", () => {
    expect(() => configureApiKey("X Api Key")).toThrow(AuthConfigError);
  });
});

describe("no mechanism configured", () => {
  it("serves without authentication and still exposes a presented bearer token to tools", async () => {
    server = await startProtectedServer();
    expect(await callWhoami(server.mcpUrl, { authorization: "Bearer pass-me-on" })).toEqual({
      token: "pass-me-on",
    });
  });
});

describe("configureAuth", () => {
  it("refuses a second mechanism and a plain object", () => {
    configureAuth(new StaticTokenConfig({ tokens: TOKENS }));
    expect(() => configureAuth(new StaticTokenConfig({ tokens: TOKENS }))).toThrow(/more than once/);
    clearAuthConfiguration();
    expect(() => configureAuth({ tokens: TOKENS } as unknown as StaticTokenConfig)).toThrow(TypeError);
  });

  it("names the misspelt or invalid field", () => {
    expect(() => new JWTAuthConfig({ jwks_uri: "ftp://x", issuer: "i", audience: "a" })).toThrow(
      /JWTAuthConfig.jwks_uri: must be an http\(s\) URL/,
    );
    expect(() => new JWTAuthConfig({ required_scope: ["a"] } as never)).toThrow(
      /JWTAuthConfig.*required_scope/,
    );
    expect(() => new JWTAuthConfig({ jwks_uri_env_var: "JWKS URI" })).toThrow(
      /JWTAuthConfig.jwks_uri_env_var/,
    );
    expect(() => new JWTAuthConfig({ jwks_uri: "https://x/jwks", public_key_env_var: "K" })).toThrow(
      /one key source/,
    );
    expect(() => new JWTAuthConfig({ algorithms: ["HS256"] } as never)).toThrow(/JWTAuthConfig.algorithms/);
  });
});
