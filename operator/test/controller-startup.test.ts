import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { silentLogger } from "../src/controller/log.ts";
import { type RunningOperator, startOperator } from "../src/controller/operator.ts";
import type { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";
import { fakeClusterWithCrds } from "./support/fake-cluster.ts";

// Resources that exist before the operator starts arrive through the informers' first list, whose items
// (as from a real API server) carry no apiVersion/kind. A namespace-scoped operator sees only its namespace.

const group = "mcp.svc.dev/v1alpha1";
let api: FakeKubeApi;
let operator: RunningOperator;
const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 10_000, interval: 20 });
const configOf = (namespace: string) =>
  parse(
    String(
      (api.get("ConfigMap", namespace, "gw-config")?.data as JsonObject | undefined)?.["config.yaml"] ??
        "null",
    ),
  );

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  for (const namespace of ["mine", "other"]) {
    api.put({ apiVersion: group, kind: "McpGateway", metadata: { name: "gw", namespace }, spec: {} });
    api.put({
      apiVersion: group,
      kind: "McpServer",
      metadata: { name: "tools", namespace },
      spec: { deployment: { image: "tools:1" }, upstreamAuthType: "none" },
    });
  }
  operator = await startOperator({
    server: api.url,
    namespace: "mine",
    leaseNamespace: "mine",
    leaseName: "op",
    leaderElection: false,
    leaseDurationMs: 1000,
    renewDeadlineMs: 800,
    retryPeriodMs: 200,
    host: "127.0.0.1",
    port: 0,
    log: silentLogger,
  });
});

afterAll(async () => {
  await operator?.stop();
  await api?.close();
});

describe("controller start-up and scope", () => {
  it("reconciles what already exists, with correct owner references", async () => {
    await waitFor(() => expect(configOf("mine")?.servers?.[0]?.url).toBe("http://tools.mine.svc:8080/mcp"));
    const owners = (api.get("ConfigMap", "mine", "gw-config")?.metadata as JsonObject | undefined)
      ?.ownerReferences;
    expect(owners).toEqual([expect.objectContaining({ apiVersion: group, kind: "McpGateway", name: "gw" })]);
    await waitFor(() => expect(api.get("Deployment", "mine", "tools")).toBeDefined());
    const deploymentOwners = (api.get("Deployment", "mine", "tools")?.metadata as JsonObject | undefined)
      ?.ownerReferences;
    expect(deploymentOwners).toEqual([
      expect.objectContaining({ apiVersion: group, kind: "McpServer", name: "tools" }),
    ]);
  });

  it("leaves other namespaces alone when scoped to one", async () => {
    await waitFor(() => expect(api.get("Service", "mine", "tools")).toBeDefined());
    expect(api.get("ConfigMap", "other", "gw-config")).toBeUndefined();
    expect(api.get("Deployment", "other", "tools")).toBeUndefined();
  });

  it("deletes the Deployment and Service when the deployment block goes", async () => {
    api.put({
      apiVersion: group,
      kind: "McpServer",
      metadata: { name: "tools", namespace: "mine" },
      spec: { url: "http://elsewhere.example/mcp", upstreamAuthType: "none" },
    });
    await waitFor(() => {
      expect(api.get("Deployment", "mine", "tools")).toBeUndefined();
      expect(api.get("Service", "mine", "tools")).toBeUndefined();
    });
    await waitFor(() => expect(configOf("mine").servers[0].url).toBe("http://elsewhere.example/mcp"));
  });

  it("keeps watching after the API server drops its watch connections", async () => {
    api.dropWatches();
    api.put({
      apiVersion: group,
      kind: "McpServer",
      metadata: { name: "late", namespace: "mine" },
      spec: { url: "http://late.example/mcp", upstreamAuthType: "none" },
    });
    await waitFor(() =>
      expect(configOf("mine").servers.map((server: { name: string }) => server.name)).toContain("late"),
    );
  });

  // API concepts › Efficient detection of changes: a client whose resourceVersion is too old gets 410 Gone
  // and must list again. Here the changes happen while the watches are down and the history is compacted
  // before they come back, so only a relist can show them: a new server and a deleted one.
  it("lists again after 410 Gone and sees what changed while it was away", async () => {
    const expiredBefore = api.expiredWatches;
    api.dropWatches();
    api.put({
      apiVersion: group,
      kind: "McpServer",
      metadata: { name: "while-away", namespace: "mine" },
      spec: { url: "http://away.example/mcp", upstreamAuthType: "none" },
    });
    api.remove("McpServer", "mine", "late");
    api.compact();
    await waitFor(() => {
      const names = configOf("mine").servers.map((server: { name: string }) => server.name);
      expect(names).toContain("while-away");
      expect(names).not.toContain("late");
    });
    expect(api.expiredWatches).toBeGreaterThan(expiredBefore);
  });
});
