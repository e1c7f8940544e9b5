import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RedisServer } from "../../gateway/test/kv/redis-server.ts";
import { API_GROUP, API_VERSION, KINDS, type Kind } from "../../operator/src/api/names.ts";
import { silentLogger } from "../../operator/src/controller/log.ts";
import { type RunningOperator, startOperator } from "../../operator/src/controller/operator.ts";
import { validateResource } from "../../operator/src/crd/validate-resource.ts";
import { FakeKubeApi } from "../../operator/src/testing/fake-kube-api.ts";
import type { JsonObject } from "../../operator/src/testing/merge.ts";
import { startFrameworkServer } from "./support/framework-server.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import { KubeletConfigMapVolume } from "./support/kubelet-volume.ts";
import { repoRoot } from "./support/paths.ts";
import type { ListeningProcess } from "./support/spawn-listening.ts";
import { startUpstream, type Upstream } from "./support/upstream.ts";

// The whole local stack on loopback: resources go into the fake Kubernetes API server; the operator (real
// @kubernetes/client-node over HTTP) renders the ConfigMap; a kubelet stand-in writes it into a directory
// the way the kubelet does (..data swap); `svc-gateway start` serves from that directory and reloads on
// change; an MCP client calls a real MCP server through it.
// Not here yet: JWT authentication end to end (the gateway's token validation is a later issue), so these
// servers use no identity provider.

const run = promisify(execFile);
const NS = "svc";
const group = `${API_GROUP}/${API_VERSION}`;
let api: FakeKubeApi;
let operator: RunningOperator;
let gateway: ListeningProcess;
let frameworkServer: ListeningProcess & { mcpUrl: string };
let upstreamB: Upstream;
let redis: RedisServer;
let kubelet: NodeJS.Timeout;
const scratch = mkdtempSync(join(tmpdir(), "svc-e2e-"));
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 50 });

const server = (name: string, spec: JsonObject): JsonObject => ({
  apiVersion: group,
  kind: "McpServer",
  metadata: { name, namespace: NS },
  spec,
});
const condition = (kind: string, name: string, type: string) =>
  (
    (
      api.get(kind, NS, name)?.status as
        | { conditions?: { type: string; status: string; reason: string; message: string }[] }
        | undefined
    )?.conditions ?? []
  ).find((c) => c.type === type);

async function callTool(serverName: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/${serverName}/mcp`)));
  try {
    const result = await client.callTool({ name: tool, arguments: args });
    return (result.content as { type: string; text: string }[])[0]?.text ?? "";
  } finally {
    await client.close();
  }
}

async function status(serverName: string): Promise<number> {
  const response = await fetch(`${gateway.url}/${serverName}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await response.body?.cancel();
  return response.status;
}

beforeAll(async () => {
  api = new FakeKubeApi(
    (Object.keys(KINDS) as Kind[]).map((kind) => ({
      group: API_GROUP,
      version: API_VERSION,
      kind,
      plural: KINDS[kind].plural,
      namespaced: true,
      statusSubresource: true,
      validate: (object) => validateResource(kind, object),
    })),
  );
  await api.start();
  [frameworkServer, upstreamB, redis] = await Promise.all([
    startFrameworkServer(join(scratch, "hello-tools")),
    startUpstream("beta"),
    RedisServer.start(),
  ]);
  operator = await startOperator({
    server: api.url,
    leaseNamespace: NS,
    leaseName: "svc-operator",
    leaderElection: true,
    leaseDurationMs: 2000,
    renewDeadlineMs: 1500,
    retryPeriodMs: 200,
    host: "127.0.0.1",
    port: 0,
    log: silentLogger,
  });

  // kubectl apply: an McpGateway and one server.
  api.put({
    apiVersion: group,
    kind: "McpGateway",
    metadata: { name: "svc-gateway", namespace: NS },
    spec: { configMapName: "svc-gateway-config" },
  });
  api.put(server("alpha", { url: frameworkServer.mcpUrl, upstreamAuthType: "none" }));

  // The kubelet: mirror the ConfigMap into a volume directory whenever it changes.
  const volume = new KubeletConfigMapVolume(join(scratch, "config-volume"));
  let seen = "";
  const sync = () => {
    const data = api.get("ConfigMap", NS, "svc-gateway-config")?.data as Record<string, string> | undefined;
    if (data && JSON.stringify(data) !== seen) {
      seen = JSON.stringify(data);
      volume.write(data);
    }
  };
  await waitFor(() => {
    sync();
    expect(seen).not.toBe("");
  });
  kubelet = setInterval(sync, 50);
  gateway = await startGatewayProcess(join(volume.directory, "config.yaml"), { REDIS_URL: redis.url });
});

afterAll(async () => {
  clearInterval(kubelet);
  await gateway?.stop();
  await operator?.stop();
  await Promise.all([frameworkServer?.stop(), upstreamB?.close(), api?.close(), redis?.kill()]);
  rmSync(scratch, { recursive: true, force: true });
});

describe("local stack: fake API server → operator → ConfigMap volume → gateway → MCP server", () => {
  it("proxies an MCP tool call to the server the resources describe", async () => {
    // alpha is a server built with our framework (svc init + svc build): its template tool `hello`.
    expect(await callTool("alpha", "hello", { name: "e2e" })).toContain("e2e");
    await waitFor(() => expect(condition("McpServer", "alpha", "Ready")?.status).toBe("True"));
    // Shared state in a real Redis, as with several gateway replicas.
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { kvstore?: string };
    expect(health.kvstore).toBe("ok");
  });

  it("picks up a new server and a disabled one without a restart", async () => {
    api.put(server("beta", { url: upstreamB.url, upstreamAuthType: "none" }));
    await waitFor(async () => expect(await callTool("beta", "add", { a: 2, b: 3 })).toBe("beta: 5"));
    api.put(server("alpha", { url: frameworkServer.mcpUrl, upstreamAuthType: "none", enabled: false }));
    await waitFor(async () => expect(await status("alpha")).toBe(404));
    // One process all along: reloaded from the swapped ..data directory, never restarted.
    expect(gateway.logs.filter((line) => line.includes('"msg":"listening"'))).toHaveLength(1);
  });

  it("reports an invalid resource in its status and keeps traffic flowing on the last valid configuration", async () => {
    api.put(server("broken", { url: "http://127.0.0.1:1/mcp", idp: "nowhere" }));
    await waitFor(() => {
      expect(condition("McpServer", "broken", "Accepted")).toMatchObject({
        status: "False",
        reason: "Invalid",
      });
      expect(condition("McpGateway", "svc-gateway", "Programmed")).toMatchObject({ status: "False" });
    });
    expect(condition("McpServer", "broken", "Accepted")?.message).toContain(
      'spec.idp: no identity provider named "nowhere"',
    );
    expect(await callTool("beta", "add", { a: 2, b: 3 })).toBe("beta: 5");
    expect(await status("broken")).toBe(404);
  });

  it("answers the kind e2e's MCP check script the same way (e2e/scripts/kind-mcp-check.ts)", async () => {
    const script = join(repoRoot, "e2e", "scripts", "kind-mcp-check.ts");
    const common = [script, "--url", gateway.url, "--timeout", "30"];
    const { stdout } = await run(process.execPath, [
      ...common,
      "--server",
      "beta",
      "--tool",
      "add",
      "--args",
      '{"a":2,"b":3}',
      "--expect",
      "beta: 5",
    ]);
    expect(stdout).toContain("ok");
    await run(process.execPath, [...common, "--server", "alpha", "--expect-status", "404"]);
  });
});
