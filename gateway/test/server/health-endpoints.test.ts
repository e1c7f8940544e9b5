// /health, /readiness and /metrics of a running gateway: the fixed bodies when all is well, and our
// documented values when the KV store (a real redis-server) is not.
import { request } from "undici";
import { afterAll, describe, expect, test, vi } from "vitest";
import { RedisServer } from "../kv/redis-server.ts";
import { connectClient, startTestGateway, type TestGateway } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

async function get(
  gateway: TestGateway,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await request(`${gateway.url}${path}`);
  return { status: response.statusCode, body: (await response.body.json()) as Record<string, unknown> };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function gatewayWith(
  env: Record<string, string> = {},
): Promise<{ gateway: TestGateway; upstream: Upstream }> {
  const upstream = await startUpstream({ stateful: true });
  cleanups.push(() => upstream.close());
  const gateway = await startTestGateway(
    [
      { name: "a", url: upstream.url },
      { name: "b", url: upstream.url, enabled: false },
    ],
    env,
  );
  cleanups.push(() => gateway.close());
  return { gateway, upstream };
}

describe("embedded defaults (in-memory KV store)", () => {
  test("/health and /readiness answer exactly the fixed fields and healthy values", async () => {
    const { gateway } = await gatewayWith();
    expect(await get(gateway, "/health")).toEqual({
      status: 200,
      body: {
        status: "healthy",
        kvstore: "ok",
        kvstore_circuit_breaker: "closed",
        upstreams: "2 configured",
        http_client: "ok",
        anonymous_access: "enabled",
        audit: { file: { state: "ok", backlog_events: 0, backlog_bytes: 0 } },
      },
    });
    expect(await get(gateway, "/readiness")).toEqual({
      status: 200,
      body: {
        status: "ready",
        draining: false,
        http_client: "initialized",
        upstreams: "2 loaded",
        kvstore_manager: "initialized",
      },
    });
  });

  test("/metrics speaks Prometheus text and counts requests by server, method and status", async () => {
    const { gateway } = await gatewayWith();
    const { client } = await connectClient(`${gateway.url}/a/mcp`);
    await client.listTools();
    await client.close();
    const response = await request(`${gateway.url}/metrics`);
    expect(response.headers["content-type"]).toContain("text/plain; version=0.0.4");
    const text = await response.body.text();
    expect(text).toContain('svc_gateway_requests_total{server="a",method="initialize",status="200"} 1');
    expect(text).toContain('svc_gateway_requests_total{server="a",method="tools/list",status="200"} 1');
    expect(text).toMatch(
      /svc_gateway_request_duration_seconds_count\{server="a",method="tools\/list",status="200"\} 1/,
    );
    expect(text).toContain("# TYPE svc_gateway_request_duration_seconds histogram");
    expect(text).toContain('svc_gateway_config_reloads_total{result="failure"} 0');
    expect(text).toContain("# TYPE svc_gateway_open_streams gauge");
    expect(text).toContain("# TYPE svc_gateway_upstream_errors_total counter");
  });

  test("drain: readiness turns 503 with draining true at once", async () => {
    const { gateway } = await gatewayWith({ SVC_DRAIN_DELAY_SECONDS: "5", SVC_DRAIN_TIMEOUT_SECONDS: "6" });
    const drained = gateway.gateway.drain();
    const readiness = await get(gateway, "/readiness");
    expect(readiness).toEqual({
      status: 503,
      body: {
        status: "not ready",
        draining: true,
        http_client: "initialized",
        upstreams: "2 loaded",
        kvstore_manager: "initialized",
      },
    });
    // Still serving during the drain delay, so endpoints have time to notice.
    expect((await get(gateway, "/health")).status).toBe(200);
    await gateway.gateway.close();
    await drained;
  });
});

describe("with a real redis-server", () => {
  test("health ok; Redis killed → breaker opens, health degraded, proxying continues; Redis back → recovers", async () => {
    const redis = await RedisServer.start();
    cleanups.push(() => redis.kill());
    const { gateway } = await gatewayWith({ REDIS_URL: redis.url });
    await until(
      () => get(gateway, "/readiness"),
      (r) => r.status === 200,
      "readiness",
    );
    expect((await get(gateway, "/health")).body).toMatchObject({
      status: "healthy",
      kvstore: "ok",
      kvstore_circuit_breaker: "closed",
    });

    await redis.kill();
    const down = await until(
      () => get(gateway, "/health"),
      (h) => h.body.kvstore_circuit_breaker === "open",
      "the breaker to open",
    );
    // Degraded, not unhealthy: restarting the gateway would not bring Redis back.
    expect(down).toEqual({
      status: 200,
      body: {
        status: "degraded",
        kvstore: "unavailable",
        kvstore_circuit_breaker: "open",
        upstreams: "2 configured",
        http_client: "ok",
        anonymous_access: "enabled",
        audit: { file: expect.objectContaining({ state: "ok" }) },
      },
    });
    expect((await get(gateway, "/readiness")).status).toBe(200);
    const { client } = await connectClient(`${gateway.url}/a/mcp`);
    expect((await client.callTool({ name: "echo", arguments: { text: "still here" } })).content).toEqual([
      { type: "text", text: "still here" },
    ]);
    await client.close();

    await redis.restart();
    await until(
      () => get(gateway, "/health"),
      (h) => h.body.status === "healthy" && h.body.kvstore_circuit_breaker === "closed",
      "recovery",
    );
  });

  test("readiness stays 503 until the KV store has connected", async () => {
    const redis = await RedisServer.start();
    await redis.kill(); // a port where nothing listens yet
    cleanups.push(() => redis.kill());
    const { gateway } = await gatewayWith({ REDIS_URL: redis.url });
    expect(await get(gateway, "/readiness")).toMatchObject({
      status: 503,
      body: { status: "not ready", kvstore_manager: "not initialized", draining: false },
    });
    await redis.restart();
    await until(
      () => get(gateway, "/readiness"),
      (r) => r.status === 200,
      "readiness after Redis came up",
    );
  });
});
