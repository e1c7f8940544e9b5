// Session affinity across gateway replicas and upstream instances, all real processes: two `svc-gateway start`
// processes sharing a real redis-server, one server name whose three instances (SVC_UPSTREAM_INSTANCES_POOL) are
// stateful MCP SDK servers, each with its own sessions. 50 sessions opened alternately through both gateways; every
// call of a session, through either gateway, lands on the instance that opened it (each instance counts its calls);
// killing one instance sends exactly its sessions to re-initialization (404), and the others keep working.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type SpawnedGateway, spawnGateway, waitForReadiness } from "../conformance/spawn-gateway.ts";
import { RedisServer } from "../kv/redis-server.ts";

const SESSIONS = 50;
let redis: RedisServer;
let dir: string;
const instances: { label: string; url: string; child: ChildProcess }[] = [];
const gateways: SpawnedGateway[] = [];

async function spawnInstance(label: string) {
  const script = fileURLToPath(new URL("./support/instance-upstream-process.ts", import.meta.url));
  const child = spawn(process.execPath, [script, label], { stdio: ["ignore", "pipe", "inherit"] });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { label, url: (JSON.parse(line.toString()) as { url: string }).url, child };
}

beforeAll(async () => {
  redis = await RedisServer.start();
  dir = await mkdtemp(join(tmpdir(), "svc-affinity-"));
  instances.push(...(await Promise.all(["a", "b", "c"].map(spawnInstance))));
  const config = join(dir, "gateway.yaml");
  await writeFile(
    config,
    `version: "1.0"\nservers:\n  - name: pool\n    url: ${instances[0]?.url}/mcp\n    upstream_auth_type: none\n`,
  );
  const env = { REDIS_URL: redis.url, SVC_UPSTREAM_INSTANCES_POOL: instances.map((i) => i.url).join(",") };
  for (const n of [1, 2]) {
    const gateway = await spawnGateway(config, { env, logFile: join(dir, `gateway-${n}.log`) });
    gateways.push(gateway);
    await waitForReadiness(gateway);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  for (const instance of instances) instance.child.kill("SIGKILL");
  await redis?.kill();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const post = (gateway: SpawnedGateway, body: unknown, session?: string) =>
  postJsonRpc(`${gateway.url}/pool/mcp`, body, session === undefined ? {} : { "mcp-session-id": session });

async function openSession(gateway: SpawnedGateway): Promise<{ id: string; label: string }> {
  const answer = await post(gateway, initializeRequest());
  expect(answer.status).toBe(200);
  const id = answer.headers.get("mcp-session-id") as string;
  const { result } = (await answer.json()) as { result: { serverInfo: { name: string } } };
  const initialized = await post(gateway, { jsonrpc: "2.0", method: "notifications/initialized" }, id);
  expect(initialized.status).toBe(202);
  return { id, label: result.serverInfo.name };
}

/** JSON-RPC ids are unique per session (the gateway refuses a reused one with 409): one counter for all. */
let nextId = 2;

async function whoami(gateway: SpawnedGateway, session: string): Promise<{ status: number; label?: string }> {
  const answer = await post(
    gateway,
    { jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "whoami", arguments: {} } },
    session,
  );
  if (answer.status !== 200) return { status: answer.status };
  const { result } = (await answer.json()) as { result: { content: { text: string }[] } };
  return { status: 200, label: result.content[0]?.text };
}

test("50 sessions through two gateways stay on their instances; killing one re-initializes only its sessions", async () => {
  const sessions: { id: string; label: string }[] = [];
  for (let i = 0; i < SESSIONS; i++) sessions.push(await openSession(gateways[i % 2] as SpawnedGateway));
  // Spread over all three instances (the gateways take turns).
  expect(new Set(sessions.map((s) => s.label))).toEqual(new Set(["a", "b", "c"]));

  // Each session: three calls, alternating gateways, starting with the one that did not open it.
  for (const [i, session] of sessions.entries()) {
    for (let call = 0; call < 3; call++) {
      expect(await whoami(gateways[(i + call + 1) % 2] as SpawnedGateway, session.id)).toEqual({
        status: 200,
        label: session.label,
      });
    }
  }
  // The upstreams' own count: every session's 3 calls on its instance, none anywhere else.
  for (const instance of instances) {
    const counts = (await (await fetch(`${instance.url}/counts`)).json()) as Record<string, number>;
    const own = sessions.filter((s) => s.label === instance.label);
    expect(counts).toEqual(Object.fromEntries(own.map((s) => [s.id, 3])));
  }

  const killed = instances[1] as (typeof instances)[number];
  const exited = once(killed.child, "exit");
  killed.child.kill("SIGKILL");
  await exited;
  for (const [i, session] of sessions.entries()) {
    const answer = await whoami(gateways[i % 2] as SpawnedGateway, session.id);
    if (session.label === killed.label) expect(answer).toEqual({ status: 404 });
    else expect(answer).toEqual({ status: 200, label: session.label });
  }
  // Re-initializing lands on a live instance, through either gateway.
  for (const gateway of gateways) {
    const fresh = await openSession(gateway);
    expect(fresh.label).not.toBe(killed.label);
    expect(await whoami(gateway, fresh.id)).toEqual({ status: 200, label: fresh.label });
  }
}, 120_000);
