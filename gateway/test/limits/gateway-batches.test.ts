// Batches through a real `svc-gateway start` process with a real redis-server: the batch size is checked before any
// per-message work (no rate-limit units, no replay keys, nothing upstream for a refused batch), every message of an
// admitted batch counts against the user's rate limit, and replay keys are written only for admitted messages.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { type SpawnedGateway, spawnGateway, waitForReadiness } from "../conformance/spawn-gateway.ts";
import {
  AUDIENCE,
  identityProvidersYaml,
  startIdentityProviderAndUpstream,
} from "../identity/support/gateway-identity.ts";
import type { TestIdentityProvider } from "../identity/support/test-identity-provider.ts";
import { RedisServer } from "../kv/redis-server.ts";
import { configYaml } from "../proxy/support/gateway.ts";
import type { Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let upstream: Upstream;
let gateway: SpawnedGateway;

beforeAll(async () => {
  ({ idp, upstream } = await startIdentityProviderAndUpstream(cleanup));
  const redis = await RedisServer.start();
  cleanup(() => redis.kill());
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-batches-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, "gateway.yaml");
  await writeFile(
    config,
    `${configYaml([{ name: "up", url: upstream.url }])}${identityProvidersYaml(idp)}security:
  rate_limiting:
    requests_per_minute: 30
    window_seconds: 60
`,
  );
  gateway = await spawnGateway(config, {
    env: { REDIS_URL: redis.url, SVC_ALLOW_ANONYMOUS: "false", SVC_AUDIT_FILE: "/dev/null" },
  });
  cleanup(() => gateway.stop());
  await waitForReadiness(gateway);
});

const url = () => `${gateway.url}/up/mcp`;
const echo = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text: `call ${id}` } },
});
const remaining = (response: Response) =>
  Number(/r=(\d+)/.exec(response.headers.get("ratelimit") ?? "")?.[1]);

async function session(sub: string): Promise<Record<string, string>> {
  const user = { authorization: `Bearer ${await idp.sign({ sub, aud: AUDIENCE })}` };
  const opened = await postJsonRpc(url(), initializeRequest(), user);
  await opened.arrayBuffer();
  const headers = {
    ...user,
    "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
    "mcp-protocol-version": "2025-06-18",
  };
  const initialized = await postJsonRpc(
    url(),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    headers,
  );
  await initialized.arrayBuffer();
  return headers;
}

describe("batches", () => {
  test("an oversized batch is refused before any per-message work: no rate-limit units, no replay keys, nothing upstream", async () => {
    const alice = await session("alice");
    const heard = upstream.requests.length;
    const huge = Array.from({ length: 5000 }, (_, i) => echo(i));
    const refused = await postJsonRpc(url(), huge, alice);
    expect(refused.status).toBe(400);
    // Refused before its messages were looked at: one JSON-RPC error with id null, like a parse error.
    expect(await refused.json()).toMatchObject({
      id: null,
      error: {
        data: { reason: "batch_too_large" },
        message: expect.stringContaining("SVC_MAX_BATCH_MESSAGES"),
      },
    });
    expect(upstream.requests.length).toBe(heard);
    // The refused batch spent one unit (the request itself, counted before its body was read) and no ids: id 0,
    // which it carried, is still fresh.
    const single = await postJsonRpc(url(), echo(0), alice);
    expect(single.status).toBe(200);
    expect(await single.text()).toContain("call 0");
    expect(remaining(single)).toBeGreaterThanOrEqual(30 - 5);
  });

  test("every message of a batch counts against the rate limit; a batch over what is left is refused whole", async () => {
    const bob = await session("bob"); // initialize + initialized: 2 of bob's 30
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => echo(from + i));
    const admitted = await postJsonRpc(url(), batch(1, 20), bob);
    expect(admitted.status).toBe(200);
    // The upstream answers on an SSE stream, one event per answer.
    const answers = (await admitted.text()).split("\n").filter((line) => line.startsWith("data: {"));
    expect(answers).toHaveLength(20);
    expect(remaining(admitted)).toBeLessThanOrEqual(8);

    const heard = upstream.requests.length;
    const over = await postJsonRpc(url(), batch(100, 10), bob);
    expect(over.status).toBe(429);
    expect(upstream.requests.length).toBe(heard);
    // Each message of the refused batch is answered with the rate-limit error under its own id.
    const body = (await over.json()) as Array<{ id: number; error: { data: { reason: string } } }>;
    expect(body.map((answer) => answer.id)).toEqual(Array.from({ length: 10 }, (_, i) => 100 + i));
    expect(body.every((answer) => answer.error.data.reason === "rate_limited")).toBe(true);
  });
});
