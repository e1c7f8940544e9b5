// Sessions belong to the principal the upstream issued them to, on every replica: two `svc-gateway start` processes
// sharing one real redis-server, two users with tokens from the real test identity provider, a real stateful and
// resumable MCP SDK upstream. Another user presenting a session id gets exactly the unknown-session answer (404) for
// POST, GET, resumption and DELETE, the upstream never hears of it, and the owner's request ids stay unspent.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
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
let redis: RedisServer;
const gateways: SpawnedGateway[] = [];
let dir: string;

const bearer = async (sub: string) => ({ authorization: `Bearer ${await idp.sign({ sub, aud: AUDIENCE })}` });

beforeAll(async () => {
  ({ idp, upstream } = await startIdentityProviderAndUpstream(cleanup));
  redis = await RedisServer.start();
  cleanup(() => redis.kill());
  dir = await mkdtemp(join(tmpdir(), "svc-gw-sessions-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, "gateway.yaml");
  await writeFile(config, configYaml([{ name: "up", url: upstream.url }]) + identityProvidersYaml(idp));
  for (const name of ["a", "b"]) {
    const gateway = await spawnGateway(config, {
      env: {
        REDIS_URL: redis.url,
        SVC_ALLOW_ANONYMOUS: "false",
        SVC_MAX_SESSIONS_PER_USER: "3",
        SVC_AUDIT_FILE: join(dir, `${name}.audit.jsonl`),
      },
      logFile: join(dir, `${name}.log`),
    });
    cleanup(() => gateway.stop());
    gateways.push(gateway);
  }
  for (const gateway of gateways) await waitForReadiness(gateway);
});

const mcpUrl = (gateway: SpawnedGateway | undefined) => `${gateway?.url}/up/mcp`;

/** Opens a session through `gateway` as `headers`' user; returns its id. */
async function openSession(
  gateway: SpawnedGateway | undefined,
  headers: Record<string, string>,
): Promise<string> {
  const response = await postJsonRpc(mcpUrl(gateway), initializeRequest(), headers);
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  const id = response.headers.get("mcp-session-id");
  if (id === null) throw new Error("the upstream issued no session id");
  const initialized = await postJsonRpc(
    mcpUrl(gateway),
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { ...headers, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
  );
  await initialized.arrayBuffer();
  expect(initialized.status).toBe(202);
  return id;
}

let nextId = 1000;
const freshId = () => nextId++;

const echo = (id: number, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "echo", arguments: { text } },
});

describe("an MCP session belongs to the user it was issued to, on every replica", () => {
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let session: string;
  let inAlicesSession: (who: Record<string, string>) => Record<string, string>;

  beforeAll(async () => {
    alice = await bearer("alice");
    bob = await bearer("bob");
    session = await openSession(gateways[0], alice);
    inAlicesSession = (who) => ({ ...who, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" });
  });

  test("the owner is served through either replica", async () => {
    for (const gateway of gateways) {
      const response = await postJsonRpc(mcpUrl(gateway), echo(freshId(), "mine"), inAlicesSession(alice));
      expect(response.status).toBe(200);
      expect(await response.text()).toContain("mine");
    }
  });

  test("another user presenting the id gets the unknown-session 404 for POST, GET, resumption and DELETE; the upstream hears nothing", async () => {
    const heard = upstream.requests.length;
    for (const gateway of gateways) {
      const call = await postJsonRpc(mcpUrl(gateway), echo(41, "hijack"), inAlicesSession(bob));
      expect(call.status).toBe(404);
      // The answer an MCP server gives for an unknown session: JSON-RPC error -32001 with id null.
      expect(await call.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32001, data: { reason: "session_not_found" } },
      });
      for (const extra of [{}, { "last-event-id": "0" }]) {
        const stream = await fetch(mcpUrl(gateway), {
          headers: { ...inAlicesSession(bob), accept: "text/event-stream", ...extra },
        });
        await stream.arrayBuffer();
        expect(stream.status).toBe(404);
      }
      const end = await fetch(mcpUrl(gateway), { method: "DELETE", headers: inAlicesSession(bob) });
      await end.arrayBuffer();
      expect(end.status).toBe(404);
    }
    expect(upstream.requests.length).toBe(heard);
    // Alice's session survived all of it.
    const still = await postJsonRpc(
      mcpUrl(gateways[1]),
      echo(freshId(), "still mine"),
      inAlicesSession(alice),
    );
    expect(await still.text()).toContain("still mine");
  });

  test("another user cannot spend the owner's JSON-RPC ids", async () => {
    const spent = await postJsonRpc(mcpUrl(gateways[1]), echo(777, "pre-spent"), inAlicesSession(bob));
    await spent.arrayBuffer();
    expect(spent.status).toBe(404);
    const mine = await postJsonRpc(mcpUrl(gateways[0]), echo(777, "fresh id"), inAlicesSession(alice));
    expect(mine.status).toBe(200);
    expect(await mine.text()).toContain("fresh id");
    // And the owner's own reuse is still a replay, on the other replica too.
    const again = await postJsonRpc(mcpUrl(gateways[1]), echo(777, "fresh id"), inAlicesSession(alice));
    await again.arrayBuffer();
    expect(again.status).toBe(409);
  });

  test("a refused presentation is on the audit trail of the replica that refused it", async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const text = await readFile(join(dir, "b.audit.jsonl"), "utf8").catch(() => "");
      const refused = text
        .split("\n")
        .filter((line) => line.includes('"session_refused"'))
        .map((line) => JSON.parse(line) as { subject: string; status: number; server: string });
      if (refused.length > 0) {
        expect(refused.every((event) => event.subject === "bob" && event.status === 404)).toBe(true);
        expect(refused[0]?.server).toBe("up");
        break;
      }
      if (Date.now() > deadline) throw new Error("no session_refused event in the audit trail");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  test("a DELETE by the owner ends the session for both replicas", async () => {
    const carol = await bearer("carol");
    const own = await openSession(gateways[1], carol);
    const headers = { ...carol, "mcp-session-id": own, "mcp-protocol-version": "2025-06-18" };
    const served = await postJsonRpc(mcpUrl(gateways[0]), echo(1, "before"), headers);
    await served.arrayBuffer();
    expect(served.status).toBe(200);
    const end = await fetch(mcpUrl(gateways[0]), { method: "DELETE", headers });
    await end.arrayBuffer();
    expect(end.status).toBe(200);
    for (const gateway of gateways) {
      const after = await postJsonRpc(mcpUrl(gateway), echo(2, "after"), headers);
      await after.arrayBuffer();
      expect(after.status).toBe(404);
    }
  });

  test("a user at the session cap gets 429 and the upstream session the gateway refused to hand out is ended", async () => {
    const dave = await bearer("dave");
    for (let i = 0; i < 3; i++) await openSession(gateways[i % 2], dave);
    const deletes = () => upstream.requests.filter((request) => request.method === "DELETE").length;
    const before = deletes();
    const refused = await postJsonRpc(mcpUrl(gateways[1]), initializeRequest(), dave);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("mcp-session-id")).toBeNull();
    expect(await refused.json()).toMatchObject({
      error: {
        data: { reason: "user_capacity" },
        message: expect.stringContaining("SVC_MAX_SESSIONS_PER_USER"),
      },
    });
    const deadline = Date.now() + 10_000;
    while (deletes() === before) {
      if (Date.now() > deadline) throw new Error("the refused upstream session was not ended");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Another user is not affected by dave's cap.
    await openSession(gateways[1], await bearer("erin"));
  });

  // Last: it kills the shared redis-server.
  test("session store down: a session this replica confirmed goes on, any other is refused with 503, never forwarded unchecked", async () => {
    const frank = await bearer("frank");
    const own = await openSession(gateways[0], frank); // confirmed on replica a only
    const headers = { ...frank, "mcp-session-id": own, "mcp-protocol-version": "2025-06-18" };
    await redis.kill();
    const onA = await postJsonRpc(mcpUrl(gateways[0]), echo(freshId(), "cached"), headers);
    expect(onA.status).toBe(200);
    expect(await onA.text()).toContain("cached");
    const heard = upstream.requests.length;
    const onB = await postJsonRpc(mcpUrl(gateways[1]), echo(freshId(), "unchecked"), headers);
    expect(onB.status).toBe(503);
    expect(await onB.json()).toMatchObject({ error: { data: { reason: "session_store_unavailable" } } });
    expect(upstream.requests.length).toBe(heard);
    // A new session during the outage is recorded on the replica that opened it, and works there.
    const during = await openSession(gateways[1], frank);
    const there = await postJsonRpc(mcpUrl(gateways[1]), echo(freshId(), "local"), {
      ...frank,
      "mcp-session-id": during,
      "mcp-protocol-version": "2025-06-18",
    });
    expect(await there.text()).toContain("local");
  });
});
