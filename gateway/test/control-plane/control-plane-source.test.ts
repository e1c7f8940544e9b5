// The gateway's control-plane client against a stand-in control plane speaking the API's wire format
// (operator/docs/control-plane.openapi.yaml): the operator itself never serves a document that does not validate, so
// the refusal of a bad one, and the start-up decisions, are driven from here. The whole path with the real operator
// is e2e/test/control-plane.test.ts.
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { ControlPlaneSource } from "../../src/control-plane/control-plane-source.ts";
import { createLogger } from "../../src/log/logger.ts";
import { GatewayMetrics } from "../../src/runtime/metrics.ts";
import type { ConfigUpdate } from "../../src/server/config-source.ts";

const GATEWAY_ID = "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
const KEY = "the-api-key";

interface StandIn {
  url: string;
  /** Serves `body` as the policy from now on (a new ETag). */
  setPolicy(body: unknown): void;
  close(): Promise<void>;
}

async function standInControlPlane(): Promise<StandIn> {
  let version = 1;
  let policy: unknown = { organization_id: "acme", generation: 1, policy: {} };
  let wake: (() => void)[] = [];
  const answer = (response: ServerResponse, status: number, body?: unknown, etag?: string) => {
    response.writeHead(status, { "content-type": "application/json", ...(etag ? { etag } : {}) });
    response.end(body === undefined ? undefined : JSON.stringify(body));
  };
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    if (request.headers.authorization !== `Bearer ${KEY}`)
      return answer(response, 401, { error: "unauthorized" });
    const url = new URL(request.url ?? "/", "http://stand-in");
    const endpoint = url.pathname.replace(`/v1/gateways/${GATEWAY_ID}/`, "");
    if (endpoint === "activation")
      return answer(response, 200, { gateway_id: GATEWAY_ID, organization_id: "acme" });
    if (endpoint === "heartbeat") return answer(response, 204);
    if (endpoint !== "policy") return answer(response, 404, { error: "not found" });
    const wait = Number(url.searchParams.get("wait") ?? 0) * 1000;
    if (request.headers["if-none-match"] === `"v${version}"` && wait > 0) {
      await new Promise<void>((resolve) => {
        wake.push(resolve);
        setTimeout(resolve, wait).unref();
      });
    }
    if (request.headers["if-none-match"] === `"v${version}"`)
      return answer(response, 304, undefined, `"v${version}"`);
    return answer(response, 200, policy, `"v${version}"`);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    setPolicy(body) {
      policy = body;
      version += 1;
      for (const resolve of wake.splice(0)) resolve();
      wake = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let scratch: string;
let standIn: StandIn;
const sources: ControlPlaneSource[] = [];

function source(url: string, key = KEY, metrics = new GatewayMetrics()): ControlPlaneSource {
  const created = new ControlPlaneSource({
    settings: { url, api_key: key, gateway_id: GATEWAY_ID, timeout: 5, cache_ttl: 60 },
    centralized: false,
    cachePath: join(scratch, "cache.json"),
    version: "test",
    logger: createLogger({ level: "silent" }),
    metrics,
    report: () => ({ health: "HEALTHY" }),
    heartbeatMs: 60_000,
  });
  sources.push(created);
  return created;
}

beforeEach(async () => {
  scratch = mkdtempSync(join(tmpdir(), "svc-cp-source-"));
  standIn = await standInControlPlane();
});

afterEach(async () => {
  for (const created of sources.splice(0)) created.close();
  await standIn.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("control-plane source", () => {
  test("refuses and counts a document that does not validate; the next good one is applied", async () => {
    const metrics = new GatewayMetrics();
    const cp = source(standIn.url, KEY, metrics);
    expect((await cp.initial()).policy.generation).toBe(1);
    await cp.confirmInitial();
    const applied: ConfigUpdate[] = [];
    cp.start(async (update) => {
      applied.push(update);
      return true;
    });
    standIn.setPolicy({
      organization_id: "acme",
      generation: 2,
      policy: { rate_limit: { requests_per_minute: 0 } },
    });
    await vi.waitFor(() => expect(cp.status().refusedDocuments).toBe(1), { timeout: 10_000 });
    expect(applied).toEqual([]);
    expect(cp.status().policyGeneration).toBe(1);
    const refused = metrics
      .snapshot()
      .scalars.find((family) => family.name === "svc_gateway_control_plane_documents_total");
    expect(refused?.series).toContainEqual(
      expect.objectContaining({ labels: { kind: "policy", result: "refused" }, value: 1 }),
    );
    // Another organization's policy is refused the same way.
    standIn.setPolicy({ organization_id: "globex", generation: 3, policy: {} });
    await vi.waitFor(() => expect(cp.status().refusedDocuments).toBe(2), { timeout: 10_000 });
    standIn.setPolicy({ organization_id: "acme", generation: 4, policy: {} });
    await vi.waitFor(() => expect(applied).toHaveLength(1), { timeout: 10_000 });
    expect(applied[0]).toMatchObject({ kind: "policy", document: { generation: 4 } });
    await vi.waitFor(() => expect(cp.status().policyGeneration).toBe(4));
  });

  test("a wrong key stops the start, even with a cached policy: it is a configuration error, not an outage", async () => {
    const good = source(standIn.url);
    await good.initial();
    await good.confirmInitial();
    await expect(source(standIn.url, "wrong").initial()).rejects.toThrow(/HTTP 401: unauthorized/);
  });

  test("unreachable: starts from the cache file when there is one, refuses to start when there is none", async () => {
    const closedUrl = standIn.url;
    await standIn.close();
    await expect(source(closedUrl).initial()).rejects.toThrow(
      /control plane unreachable: .*no usable cached policy in .*cache\.json/,
    );
    standIn = await standInControlPlane();
    const first = source(standIn.url);
    await first.initial();
    await first.confirmInitial();
    const upUrl = standIn.url;
    await standIn.close();
    const restarted = source(upUrl);
    const initial = await restarted.initial();
    expect(initial.fromCache).toBe(true);
    expect(initial.policy.organization_id).toBe("acme");
    expect(restarted.status().state).toBe("unreachable");
    standIn = await standInControlPlane();
  });
});
