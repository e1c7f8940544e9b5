// Open registration as a stranger uses it: every field bounded, redirect URIs only where a code may safely go (https,
// loopback http, an app's own scheme), no machine clients unless the operator allows them, a deny-list server closed
// to callers without groups, per-address and gateway-wide registration budgets that never touch token requests, and
// registrations that are forgotten when unused.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { request } from "node:http";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryKvStore } from "../../src/kv/index.ts";
import { SealedStore } from "../../src/oauth/sealed-store.ts";
import { RedisServer } from "../kv/redis-server.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { type OAuthStack, startOAuthStack } from "./support/oauth-gateway.ts";
import {
  authorizationCode,
  exchange,
  REDIRECT,
  refresh,
  register,
  registerPublicClient,
  token,
} from "./support/oauth-requests.ts";

const PUBLIC_CLIENT = {
  client_name: "desktop",
  redirect_uris: [REDIRECT],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};
const MACHINE = { client_name: "job", grant_types: ["client_credentials"], response_types: [] };

describe("what open registration accepts", () => {
  let stack: OAuthStack;
  beforeAll(async () => {
    // Many registrations from one address here: the per-address budget is another test's.
    stack = await startOAuthStack(
      { SVC_OAUTH_DEV_KEYS: "true", SVC_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_MINUTE: "1000" },
      { oauthYaml: "  registration:\n    redirect_uri_schemes: [cursor]" },
    );
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("refuses a 52 KiB client name, and names above 200 characters", async () => {
    for (const name of ["x".repeat(52 * 1024), "x".repeat(201)]) {
      const { status, body } = await register(stack.url, { ...PUBLIC_CLIENT, client_name: name });
      expect(status).toBe(400);
      expect(body.error).toBe("invalid_client_metadata");
      expect(body.error_description).toMatch(/client_name is longer than 200 characters/);
    }
    expect((await register(stack.url, { ...PUBLIC_CLIENT, client_name: "x".repeat(200) })).status).toBe(201);
  });

  it("refuses URIs over 2000 characters and more than ten redirect URIs", async () => {
    const long = await register(stack.url, {
      ...PUBLIC_CLIENT,
      client_uri: `https://app.example/${"a".repeat(2000)}`,
    });
    expect(long.status).toBe(400);
    expect(long.body.error_description).toMatch(/client_uri is longer than 2000 characters/);
    const many = await register(stack.url, {
      ...PUBLIC_CLIENT,
      redirect_uris: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1:${1000 + i}/cb`),
    });
    expect(many.status).toBe(400);
    expect(many.body.error_description).toMatch(/redirect_uris has more than 10 members/);
  });

  for (const uri of [
    "http://evil.example/cb",
    "http://10.0.0.8/cb",
    "javascript:alert(document.cookie)//",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "vscode-like://callback",
  ]) {
    it(`refuses the redirect URI ${uri}`, async () => {
      // Each as the client type the library itself would accept it for: web for http, native for other schemes.
      const native = /^(https?):/.test(uri) ? {} : { application_type: "native" };
      const { status, body } = await register(stack.url, {
        ...PUBLIC_CLIENT,
        ...native,
        redirect_uris: [uri],
      });
      expect(status).toBe(400);
      expect(body.error).toMatch(/invalid_client_metadata|invalid_redirect_uri/);
      expect(String(body.error_description)).toMatch(/redirect URI|redirect_uris/);
    });
  }

  for (const uri of [
    "https://app.example/callback",
    "http://127.0.0.1:33418/callback",
    "http://localhost:6274/oauth/callback",
    "http://[::1]:8080/cb",
    "com.example.app:/oauth2redirect",
    "cursor://anysphere.cursor-mcp/oauth/callback",
  ]) {
    it(`accepts the redirect URI ${uri}`, async () => {
      // An app's own scheme is a native client's (OIDC Registration: application_type native).
      const native = /^(https?):/.test(uri) ? {} : { application_type: "native" };
      const { status, body } = await register(stack.url, {
        ...PUBLIC_CLIENT,
        ...native,
        redirect_uris: [uri],
      });
      expect(status, JSON.stringify(body)).toBe(201);
    });
  }

  it("refuses client_credentials to registered clients unless the operator allows them", async () => {
    const { status, body } = await register(stack.url, {
      ...MACHINE,
      token_endpoint_auth_method: "client_secret_basic",
    });
    expect(status).toBe(400);
    expect(body.error).toBe("invalid_client_metadata");
    expect(body.error_description).toMatch(/client_credentials is not open to registered clients/);
  });
});

describe("a deny-list server and callers without groups", () => {
  let stack: OAuthStack;
  const denyList = [
    "gateway_policy:",
    "  server_rbac:",
    "    rbac_enabled: true",
    "    rbac_mode: deny",
    "    denied_groups: [contractors]",
  ];
  beforeAll(async () => {
    // Machine clients are the operator's (the registration token); they carry no groups.
    stack = await startOAuthStack(
      { SVC_OAUTH_DEV_KEYS: "true", SVC_OAUTH_REGISTRATION_TOKEN: "operator-only" },
      { extraYaml: denyList.join("\n") },
    );
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  const machineToken = async (gateway: string) => {
    const { body } = await register(
      gateway,
      { ...MACHINE, token_endpoint_auth_method: "client_secret_basic" },
      { authorization: "Bearer operator-only" },
    );
    const answer = await token(
      gateway,
      { grant_type: "client_credentials", resource: `${gateway}/tools/mcp` },
      { id: body.client_id as string, secret: body.client_secret as string },
    );
    expect(answer.status).toBe(200);
    return answer.body.access_token as string;
  };

  it("refuses a machine token (no groups) at a deny-list server, and admits a user in no denied group", async () => {
    const tools = `${stack.url}/tools/mcp`;
    const response = await fetch(tools, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await machineToken(stack.url)}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("forbidden");

    const clientId = await registerPublicClient(stack.url, { authorization: "Bearer operator-only" });
    const { code, verifier } = await authorizationCode(stack.url, clientId, tools);
    const issued = await exchange(stack.url, clientId, code, verifier, tools);
    const { client } = await connectClient(tools, {
      headers: { authorization: `Bearer ${issued.body.access_token}` },
    });
    await client.close();
  }, 60_000);

  it("admits callers without groups where the operator turned deny_requires_groups off", async () => {
    const open = await startOAuthStack(
      { SVC_OAUTH_DEV_KEYS: "true", SVC_OAUTH_REGISTRATION_TOKEN: "operator-only" },
      { extraYaml: [...denyList, "    deny_requires_groups: false"].join("\n") },
    );
    try {
      const { client } = await connectClient(`${open.url}/tools/mcp`, {
        headers: { authorization: `Bearer ${await machineToken(open.url)}` },
      });
      await client.close();
    } finally {
      await open.close();
    }
  }, 60_000);
});

/** POST /oauth/register from a chosen loopback source address (127.0.0.0/8 is all this machine's). */
function registerFrom(gateway: string, localAddress: string): Promise<number> {
  const url = new URL(`${gateway}/oauth/register`);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", localAddress, headers: { "content-type": "application/json" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(PUBLIC_CLIENT));
  });
}

describe("registration budgets", () => {
  let stack: OAuthStack;
  beforeAll(async () => {
    stack = await startOAuthStack({
      SVC_OAUTH_DEV_KEYS: "true",
      SVC_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_MINUTE: "3",
      SVC_OAUTH_REGISTRATIONS_PER_MINUTE: "1000",
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("holds one address to its budget, admits another, and never refuses a token refresh", async () => {
    const tools = `${stack.url}/tools/mcp`;
    const clientId = await registerPublicClient(stack.url);
    const { code, verifier } = await authorizationCode(stack.url, clientId, tools);
    let refreshToken = (await exchange(stack.url, clientId, code, verifier, tools)).body
      .refresh_token as string;

    const flood: number[] = [];
    for (let i = 0; i < 5; i++) flood.push(await registerFrom(stack.url, "127.0.0.1"));
    expect(flood.slice(-2)).toEqual([429, 429]);
    expect(await registerFrom(stack.url, "127.0.0.2")).toBe(201);

    // Token requests are no registrations: a client keeps refreshing while its address is over the budget.
    for (let i = 0; i < 3; i++) {
      const refreshed = await refresh(stack.url, clientId, refreshToken);
      expect(refreshed.status).toBe(200);
      refreshToken = refreshed.body.refresh_token as string;
    }
    const over = await register(stack.url, PUBLIC_CLIENT);
    expect(over.status).toBe(429);
    expect(over.body.error_description).toMatch(/too many client registrations from this address/);
  }, 60_000);
});

describe("the lifetime of a registration", () => {
  let redis: RedisServer;
  let stack: OAuthStack;
  let kv: Redis;
  const kvKey = randomBytes(32);
  // The record names as the gateway computes them from SVC_OAUTH_KV_KEY (HMACs: ids never appear in Redis).
  const names = new SealedStore(new MemoryKvStore(), kvKey);

  beforeAll(async () => {
    redis = await RedisServer.start();
    kv = new Redis(redis.url);
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    stack = await startOAuthStack(
      {
        REDIS_URL: redis.url,
        SVC_OAUTH_KV_KEY: kvKey.toString("base64"),
        SVC_OAUTH_SIGNING_KEYS: JSON.stringify({
          keys: [{ ...privateKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" }],
        }),
      },
      { oauthYaml: "  registration:\n    unused_client_ttl: 600\n    client_credentials: true" },
    );
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    kv?.disconnect();
    await redis?.kill();
  });

  it("keeps an unused client for unused_client_ttl, and a used one for refresh_token_ttl more", async () => {
    const { body } = await register(stack.url, {
      ...MACHINE,
      token_endpoint_auth_method: "client_secret_basic",
    });
    const key = names.keyOf("Client", body.client_id as string);
    const unused = await kv.pttl(key);
    expect(unused).toBeGreaterThan(0);
    expect(unused).toBeLessThanOrEqual(600_000);

    const answer = await token(
      stack.url,
      { grant_type: "client_credentials" },
      { id: body.client_id as string, secret: body.client_secret as string },
    );
    expect(answer.status).toBe(200);
    // The extension is written after the answer: wait for it rather than for a fixed time.
    await expect.poll(() => kv.pttl(key), { timeout: 10_000 }).toBeGreaterThan(604_800_000);
  }, 60_000);
});
