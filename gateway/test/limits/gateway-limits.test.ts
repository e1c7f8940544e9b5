// Step 3 through real gateways: per-user rate limits (in memory, and shared by two `svc-gateway start` processes
// through one real redis-server), JSON-RPC request id replay within a session, and DPoP proof replay.
import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { initializeRequest as initialize, postJsonRpc as post } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { type SpawnedGateway, spawnGateway, waitForReadiness } from "../conformance/spawn-gateway.ts";
import {
  AUDIENCE,
  identityProvidersYaml,
  startIdentityProviderAndUpstream,
} from "../identity/support/gateway-identity.ts";
import type { TestIdentityProvider } from "../identity/support/test-identity-provider.ts";
import { RedisServer } from "../kv/redis-server.ts";
import { configYaml, startTestGateway, type TestGateway } from "../proxy/support/gateway.ts";
import type { Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let upstream: Upstream;

beforeAll(async () => {
  ({ idp, upstream } = await startIdentityProviderAndUpstream(cleanup));
});

function accessYaml(limit: number): string {
  return `${identityProvidersYaml(idp)}security:
  rate_limiting:
    requests_per_minute: ${limit}
    window_seconds: 60
`;
}

const tokenFor = (sub: string): Promise<string> => idp.sign({ sub, aud: AUDIENCE });

describe("rate limit per user (in-memory store)", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway(
      [{ name: "up", url: upstream.url }],
      { SVC_ALLOW_ANONYMOUS: undefined },
      accessYaml(3),
    );
    cleanup(() => gateway.close());
  });

  test("the quota admits 3 requests with RateLimit headers, then 429 with Retry-After; other users are unaffected", async () => {
    const alice = { authorization: `Bearer ${await tokenFor("alice")}` };
    for (let i = 3; i >= 1; i--) {
      const response = await post(`${gateway.url}/up/mcp`, initialize(), alice);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-policy")).toBe('"per-user";q=3;w=60');
      expect(response.headers.get("ratelimit")).toMatch(new RegExp(`^"per-user";r=${i - 1};t=\\d+$`));
    }
    const refused = await post(`${gateway.url}/up/mcp`, initialize(), alice);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("ratelimit")).toMatch(/^"per-user";r=0;t=\d+$/);
    expect(refused.headers.get("ratelimit-policy")).toBe('"per-user";q=3;w=60');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rate_limited");

    const bob = await post(`${gateway.url}/up/mcp`, initialize(), {
      authorization: `Bearer ${await tokenFor("bob")}`,
    });
    await bob.arrayBuffer();
    expect(bob.status).toBe(200);
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain('svc_gateway_rate_limited_total{server="up"} 1');
  });
});

describe("replay protection", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway([{ name: "up", url: upstream.url }]);
    cleanup(() => gateway.close());
  });

  test("a JSON-RPC request id reused within a session → 409 with a JSON-RPC error for that id", async () => {
    const url = `${gateway.url}/up/mcp`;
    const opened = await post(url, initialize());
    await opened.arrayBuffer();
    const session = opened.headers.get("mcp-session-id") ?? "";
    expect(session).not.toBe("");
    const headers = { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" };
    expect((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers)).status).toBe(
      202,
    );
    const first = await post(url, { jsonrpc: "2.0", id: 7, method: "tools/list" }, headers);
    await first.arrayBuffer();
    expect(first.status).toBe(200);
    // "7" is another id than 7.
    const other = await post(url, { jsonrpc: "2.0", id: "7", method: "tools/list" }, headers);
    await other.arrayBuffer();
    expect(other.status).toBe(200);
    const again = await post(url, { jsonrpc: "2.0", id: 7, method: "tools/list" }, headers);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32009, data: { reason: "replayed" } },
    });
  });

  test("a DPoP proof is single-use; an invalid one → 401 invalid_dpop_proof", async () => {
    const url = `${gateway.url}/up/mcp`;
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const jwk = await exportJWK(publicKey);
    const proof = (htm: string) =>
      new SignJWT({ htm, htu: url, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk })
        .sign(privateKey);
    const spent = await proof("POST");
    const first = await post(url, initialize(), { dpop: spent });
    await first.arrayBuffer();
    expect(first.status).toBe(200);
    const replay = await post(url, initialize(), { dpop: spent });
    expect(replay.status).toBe(409);
    expect(((await replay.json()) as { error: { code: string } }).error.code).toBe("replayed");
    const wrongMethod = await post(url, initialize(), { dpop: await proof("GET") });
    expect(wrongMethod.status).toBe(401);
    expect(wrongMethod.headers.get("www-authenticate")).toMatch(
      /^DPoP realm="svc-gateway", error="invalid_dpop_proof", /,
    );
  });
});

describe("two gateway processes sharing one redis-server", () => {
  let redis: RedisServer;
  const gateways: SpawnedGateway[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
    cleanup(() => redis.kill());
    const dir = await mkdtemp(join(tmpdir(), "svc-gw-limits-"));
    cleanup(() => rm(dir, { recursive: true, force: true }));
    const config = join(dir, "gateway.yaml");
    await writeFile(config, configYaml([{ name: "up", url: upstream.url }]) + accessYaml(4));
    for (const name of ["a", "b"]) {
      const gateway = await spawnGateway(config, {
        env: { REDIS_URL: redis.url, SVC_ALLOW_ANONYMOUS: "false" },
        logFile: join(dir, `${name}.log`),
      });
      cleanup(() => gateway.stop());
      gateways.push(gateway);
    }
    for (const gateway of gateways) await waitForReadiness(gateway);
  });

  test("the limit holds across both; Redis killed → traffic flows unchecked and health turns degraded", async () => {
    const carol = { authorization: `Bearer ${await tokenFor("carol")}` };
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const response = await post(`${gateways[i % 2]?.url}/up/mcp`, initialize(), carol);
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);

    await redis.kill();
    for (const gateway of gateways) {
      const response = await post(`${gateway.url}/up/mcp`, initialize(), carol);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit")).toBeNull();
      const health = await fetch(`${gateway.url}/health`);
      expect(health.status).toBe(200);
      expect(((await health.json()) as { status: string }).status).toBe("degraded");
      const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
      expect(metrics).toMatch(/svc_gateway_limit_checks_skipped_total\{check="rate_limit"\} [1-9]/);
    }
  });
});
