// One user cannot starve the others: per-user caps on requests in flight and open GET streams, and GET streams in a
// connection pool (and budget) of their own, so streams never take the connections calls need. A real
// `svc-gateway start` process with deliberately small pools in front of a real stateful MCP SDK upstream.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { type SpawnedGateway, spawnGateway } from "../conformance/spawn-gateway.ts";
import {
  AUDIENCE,
  identityProvidersYaml,
  startIdentityProviderAndUpstream,
} from "../identity/support/gateway-identity.ts";
import type { TestIdentityProvider } from "../identity/support/test-identity-provider.ts";
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
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-caps-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, "gateway.yaml");
  await writeFile(config, configYaml([{ name: "up", url: upstream.url }]) + identityProvidersYaml(idp));
  gateway = await spawnGateway(config, {
    env: {
      SVC_ALLOW_ANONYMOUS: "false",
      SVC_AUDIT_FILE: "/dev/null",
      // Two connections for calls; four for streams, at most three of them one user's; one call in flight per user.
      SVC_UPSTREAM_CONNECTIONS: "2",
      SVC_MAX_INFLIGHT_PER_USER: "1",
      SVC_UPSTREAM_STREAM_CONNECTIONS: "4",
      SVC_MAX_STREAMS_PER_USER: "3",
    },
  });
  cleanup(() => gateway.stop());
});

const url = () => `${gateway.url}/up/mcp`;
const bearer = async (sub: string) => ({ authorization: `Bearer ${await idp.sign({ sub, aud: AUDIENCE })}` });

async function openSession(user: Record<string, string>): Promise<Record<string, string>> {
  const response = await postJsonRpc(url(), initializeRequest(), user);
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  const headers = {
    ...user,
    "mcp-session-id": response.headers.get("mcp-session-id") ?? "",
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

/** Opens the session's GET notification stream; the caller ends it with the returned controller. */
async function openStream(session: Record<string, string>): Promise<{ status: number; close: () => void }> {
  const controller = new AbortController();
  const response = await fetch(url(), {
    headers: { ...session, accept: "text/event-stream" },
    signal: controller.signal,
  });
  if (response.status !== 200) await response.arrayBuffer();
  return { status: response.status, close: () => controller.abort() };
}

let id = 0;
describe("per-user caps", () => {
  test("open streams: one user's streams are capped, the upstream's stream budget is refused at once when spent, and calls keep flowing", async () => {
    const alice = await bearer("alice");
    const streams: Array<{ status: number; close: () => void }> = [];
    cleanup(async () => {
      for (const stream of streams) stream.close();
    });
    for (let i = 0; i < 3; i++) streams.push(await openStream(await openSession(alice)));
    expect(streams.map((stream) => stream.status)).toEqual([200, 200, 200]);

    const fourth = await fetch(url(), {
      headers: { ...(await openSession(alice)), accept: "text/event-stream" },
    });
    expect(fourth.status).toBe(429);
    expect(await fourth.json()).toMatchObject({
      error: { code: "user_capacity", message: expect.stringContaining("SVC_MAX_STREAMS_PER_USER") },
    });

    const bob = await openSession(await bearer("bob"));
    const bobsStream = await openStream(bob);
    streams.push(bobsStream);
    expect(bobsStream.status).toBe(200);
    // Four streams hold every stream connection: the next one is refused at once, not queued for hours.
    const carol = await openSession(await bearer("carol"));
    const refused = await fetch(url(), { headers: { ...carol, accept: "text/event-stream" } });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { data: { reason: "upstream_busy" } } });

    // With every stream connection taken, calls still have their own two connections.
    for (const session of [bob, carol]) {
      const answer = await postJsonRpc(
        url(),
        {
          jsonrpc: "2.0",
          id: ++id,
          method: "tools/call",
          params: { name: "echo", arguments: { text: "flows" } },
        },
        session,
      );
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("flows");
    }

    // A stream given back frees its place, for the user and for the upstream's budget.
    streams.shift()?.close();
    const deadline = Date.now() + 10_000;
    for (;;) {
      const again = await openStream(carol);
      if (again.status === 200) {
        streams.push(again);
        break;
      }
      if (Date.now() > deadline) throw new Error(`a closed stream's place was never freed (${again.status})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  });

  test("requests in flight: a user at the cap gets 429 while others are served, and the slot comes back", async () => {
    const dave = await openSession(await bearer("dave"));
    const held = postJsonRpc(
      url(),
      { jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "gated", arguments: { steps: 0 } } },
      dave,
    );
    const deadline = Date.now() + 10_000;
    while (upstream.gate.entered === 0) {
      if (Date.now() > deadline) throw new Error("the gated call never reached the upstream");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const second = await postJsonRpc(
      url(),
      { jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "echo", arguments: { text: "x" } } },
      dave,
    );
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({
      error: {
        code: "user_capacity",
        message: expect.stringContaining("SVC_MAX_INFLIGHT_PER_USER"),
      },
    });

    const erin = await openSession(await bearer("erin"));
    const served = await postJsonRpc(
      url(),
      {
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "erin" } },
      },
      erin,
    );
    expect(await served.text()).toContain("erin");

    upstream.gate.release();
    expect(await (await held).text()).toContain("released");
    const after = await postJsonRpc(
      url(),
      {
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "again" } },
      },
      dave,
    );
    expect(await after.text()).toContain("again");
  });
});
