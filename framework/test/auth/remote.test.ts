import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureAuth, RemoteAuthConfig } from "../../src/auth/index.ts";
import { clearAuthConfiguration } from "../../src/auth/runtime.ts";
import { type IdentityProvider, startIdentityProvider } from "./helpers/identity-provider.ts";
import {
  callWhoami,
  type ProtectedServer,
  postInitialize,
  startProtectedServer,
} from "./helpers/protected-server.ts";

// Remote mechanism: two resource servers sharing two trusted authorization servers (real oidc-providers,
// discovered through their metadata), and a third provider nobody trusts.

const RESOURCE_A = "https://a.example.test/mcp";
const RESOURCE_B = "https://b.example.test/mcp";

let trusted1: IdentityProvider;
let trusted2: IdentityProvider;
let untrusted: IdentityProvider;
let serverA: ProtectedServer;
let serverB: ProtectedServer;

beforeAll(async () => {
  [trusted1, trusted2, untrusted] = await Promise.all([
    startIdentityProvider(),
    startIdentityProvider(),
    startIdentityProvider(),
  ]);
  configureAuth(
    new RemoteAuthConfig({
      authorization_servers_env_var: "AUTH_SERVERS",
      resource_server_url_env_var: "RESOURCE_URL",
      token_verifier_config: { required_scopes: ["tools:read"] },
    }),
  );
  const servers = `${trusted1.issuer}, ${trusted2.issuer}`;
  serverA = await startProtectedServer({ env: { AUTH_SERVERS: servers, RESOURCE_URL: RESOURCE_A } });
  serverB = await startProtectedServer({ env: { AUTH_SERVERS: servers, RESOURCE_URL: RESOURCE_B } });
});
afterAll(async () => {
  await Promise.all([serverA?.close(), serverB?.close()]);
  await Promise.all([trusted1?.close(), trusted2?.close(), untrusted?.close()]);
  clearAuthConfiguration();
});

describe("remote authorization servers", () => {
  it("accepts tokens from each trusted server, for the right resource", async () => {
    for (const [idp, alg] of [
      [trusted1, "RS256"],
      [trusted2, "ES256"],
    ] as const) {
      const forA = await idp.token({ resource: RESOURCE_A, alg });
      expect((await callWhoami(serverA.mcpUrl, { authorization: `Bearer ${forA}` })).token).toBe(forA);
      const forB = await idp.token({ resource: RESOURCE_B, alg });
      expect((await callWhoami(serverB.mcpUrl, { authorization: `Bearer ${forB}` })).token).toBe(forB);
    }
  });

  it("refuses a token issued for the other resource server", async () => {
    const forB = await trusted1.token({ resource: RESOURCE_B });
    const response = await postInitialize(serverA.mcpUrl, { authorization: `Bearer ${forB}` });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error_description: "token aud claim is not accepted" });
  });

  it("refuses a token from an untrusted server", async () => {
    const token = await untrusted.token({ resource: RESOURCE_A });
    const response = await postInitialize(serverA.mcpUrl, { authorization: `Bearer ${token}` });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({
      error_description: "token issuer is not a trusted authorization server",
    });
  });

  it("answers 403 when the token lacks the verifier's required scope", async () => {
    const token = await trusted2.token({ resource: RESOURCE_A, scope: "tools:write" });
    expect((await postInitialize(serverA.mcpUrl, { authorization: `Bearer ${token}` })).status).toBe(403);
  });

  it("advertises both authorization servers in its RFC 9728 metadata", async () => {
    const response = await fetch(`${serverA.url}/.well-known/oauth-protected-resource/mcp`);
    expect(await response.json()).toMatchObject({
      resource: RESOURCE_A,
      authorization_servers: [trusted1.issuer, trusted2.issuer],
      scopes_supported: ["tools:read"],
    });
    const challenge = (await postInitialize(serverA.mcpUrl)).headers.get("www-authenticate");
    expect(challenge).toContain(
      `resource_metadata="${serverA.url}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});

describe("a pathless resource identifier", () => {
  it("is advertised and required as the audience verbatim, without a trailing slash", async () => {
    const resource = "https://c.example.test";
    const server = await startProtectedServer({
      env: { AUTH_SERVERS: trusted1.issuer, RESOURCE_URL: resource },
    });
    try {
      const metadata = await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json();
      expect(metadata).toMatchObject({ resource });
      const token = await trusted1.token({ resource });
      expect((await callWhoami(server.mcpUrl, { authorization: `Bearer ${token}` })).token).toBe(token);
    } finally {
      await server.close();
    }
  });
});

describe("broken remote configuration stops the start", () => {
  it.each([
    ["AUTH_SERVERS unset", {}, /^AUTH_SERVERS: environment variable is not set/],
    [
      "an unreachable server",
      { AUTH_SERVERS: "http://127.0.0.1:9" },
      /^AUTH_SERVERS: no RFC 8414 or OpenID Connect metadata could be read from http:\/\/127\.0\.0\.1:9\/ \(unreachable/,
    ],
    [
      "a server URL that is not one",
      { AUTH_SERVERS: "https://" },
      /^AUTH_SERVERS: "https:\/\/" is not a valid URL/,
    ],
    [
      "a RESOURCE_URL that is not a URL",
      { AUTH_SERVERS: "http://127.0.0.1:9", RESOURCE_URL: "a.example" },
      /^RESOURCE_URL/,
    ],
  ])("%s", async (_name, env, message) => {
    await expect(startProtectedServer({ env })).rejects.toThrow(message);
  });

  it("an authorization server over plain http off loopback", async () => {
    await expect(startProtectedServer({ env: { AUTH_SERVERS: "http://auth.example.test" } })).rejects.toThrow(
      /^AUTH_SERVERS: "http:\/\/auth.example.test" must use https/,
    );
  });

  it("a server without authorization-server metadata", async () => {
    await expect(startProtectedServer({ env: { AUTH_SERVERS: serverA.url } })).rejects.toThrow(
      /^AUTH_SERVERS: no RFC 8414 or OpenID Connect metadata/,
    );
  });
});
