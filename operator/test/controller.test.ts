import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import { jsonLogger, silentLogger } from "../src/controller/log.ts";
import { type RunningOperator, startOperator } from "../src/controller/operator.ts";
import type { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";
import { fakeClusterWithCrds } from "./support/fake-cluster.ts";
import { validateKubernetesObject } from "./support/kubernetes-schemas.ts";

// The operator (real @kubernetes/client-node over HTTP) against the fake API server.

const NS = "gw";
const group = "mcp.svc.dev/v1alpha1";
let api: FakeKubeApi;
let operator: RunningOperator;

type Status = {
  observedGeneration?: number;
  url?: string;
  conditions?: { type: string; status: string; reason: string; message: string }[];
};
const statusOf = (kind: string, name: string) => (api.get(kind, NS, name)?.status ?? {}) as Status;
const condition = (kind: string, name: string, type: string) =>
  statusOf(kind, name).conditions?.find((c) => c.type === type);
const configYaml = () =>
  parse(
    String(
      (api.get("ConfigMap", NS, "main-config")?.data as JsonObject | undefined)?.["config.yaml"] ?? "null",
    ),
  );
const gatewayEnv = () => {
  const spec = api.get("Deployment", NS, "main")?.spec as {
    template: { spec: { containers: { env?: { name: string; valueFrom?: unknown }[] }[] } };
  };
  return spec.template.spec.containers[0]?.env ?? [];
};
const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 10_000, interval: 20 });

// upstreamAuthType: the default, oauth, is not built and the gateway refuses it; these upstreams take no credentials.
const server = (name: string, spec: JsonObject): JsonObject => ({
  apiVersion: group,
  kind: "McpServer",
  metadata: { name, namespace: NS },
  spec: { upstreamAuthType: "none", ...spec },
});
// An exporter holding its secret in a Secret (disabled, so the gateway config needs no reachable receiver).
const gatewaySpec = (extra: JsonObject = {}): JsonObject => ({
  security: { rateLimiting: { requestsPerMinute: 100 } },
  exporters: {
    searchIndex: [
      {
        name: "audit",
        enabled: false,
        url: "https://search.example",
        apiKey: { secretKeyRef: { name: "search", key: "api-key" } },
      },
    ],
  },
  ...extra,
});

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  // The gateway Deployment, as the Helm chart creates it.
  api.put({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "main", namespace: NS },
    spec: {
      selector: { matchLabels: { app: "gateway" } },
      template: {
        metadata: { labels: { app: "gateway" } },
        spec: {
          containers: [
            { name: "gateway", image: "svc-gateway:dev", env: [{ name: "LOG_LEVEL", value: "info" }] },
          ],
        },
      },
    },
  });
  // One of its pods, as the Deployment controller would have made it, and a pod of something else.
  api.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "main-7d9c-abcde", namespace: NS, labels: { app: "gateway" } },
    spec: { containers: [{ name: "gateway", image: "svc-gateway:dev" }] },
  });
  api.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "other", namespace: NS, labels: { app: "other" } },
    spec: { containers: [{ name: "other", image: "other:dev" }] },
  });
  operator = await startOperator({
    server: api.url,
    leaseNamespace: NS,
    leaseName: "svc-operator",
    leaderElection: false,
    leaseDurationMs: 1000,
    renewDeadlineMs: 800,
    retryPeriodMs: 200,
    host: "127.0.0.1",
    port: 0,
    backoff: { baseDelayMs: 50, maxDelayMs: 1000 },
    log: process.env.DEBUG_OPERATOR ? jsonLogger() : silentLogger,
  });
});

afterAll(async () => {
  await operator?.stop();
  await api?.close();
});

describe("controller", () => {
  it("renders created resources into the ConfigMap, server workloads and status", async () => {
    api.put({
      apiVersion: group,
      kind: "McpGateway",
      metadata: { name: "main", namespace: NS },
      spec: gatewaySpec(),
    });
    api.put({
      apiVersion: group,
      kind: "IdentityProvider",
      metadata: { name: "corp", namespace: NS },
      spec: { type: "hosted_idp", issuer: "https://idp.example/", jwksUri: "https://idp.example/jwks" },
    });
    api.put(
      server("remote", {
        url: "http://remote.example/mcp",
        idp: "corp",
        rbacEnabled: true,
        allowedGroups: ["eng"],
      }),
    );
    api.put(server("local", { deployment: { image: "weather:1", port: 9000 } }));

    await waitFor(() =>
      expect(configYaml()?.servers?.map((s: { name: string }) => s.name)).toEqual(["local", "remote"]),
    );
    const config = configYaml();
    expect(config.servers[0].url).toBe("http://local.gw.svc:9000/mcp");
    expect(config.security.rate_limiting.requests_per_minute).toBe(100);
    expect(config.exporters.search_index[0].api_key).toMatch(
      /^\$\{SVC_SECRET_MCP_GATEWAY_MAIN_EXPORTERS_SEARCH_INDEX_0_API_KEY_[0-9A-F]{6}\}$/,
    );

    // Owned objects carry owner references; the server runs as a Deployment + Service.
    const gatewayMetadata = api.get("McpGateway", NS, "main")?.metadata as JsonObject | undefined;
    const configMapMetadata = api.get("ConfigMap", NS, "main-config")?.metadata as JsonObject | undefined;
    expect(configMapMetadata?.ownerReferences).toEqual([
      expect.objectContaining({
        kind: "McpGateway",
        name: "main",
        uid: gatewayMetadata?.uid,
        controller: true,
      }),
    ]);
    await waitFor(() => expect(api.get("Service", NS, "local")).toBeDefined());
    expect(api.get("Deployment", NS, "local")?.spec).toMatchObject({
      replicas: 1,
      template: { spec: { containers: [{ image: "weather:1" }] } },
    });

    // Secret env on the gateway container, next to what Helm set.
    await waitFor(() => {
      const env = gatewayEnv();
      expect(env.map((e) => e.name)).toEqual([
        "LOG_LEVEL",
        expect.stringMatching(/^SVC_SECRET_MCP_GATEWAY_MAIN_EXPORTERS_SEARCH_INDEX_0_API_KEY_/),
      ]);
      expect(env[1]?.valueFrom).toEqual({ secretKeyRef: { name: "search", key: "api-key" } });
    });

    await waitFor(() => {
      expect(condition("McpServer", "remote", "Accepted")).toMatchObject({
        status: "True",
        reason: "Accepted",
      });
      expect(condition("McpServer", "remote", "Programmed")).toMatchObject({ status: "True" });
      expect(condition("McpServer", "remote", "Ready")).toMatchObject({ status: "True" });
      expect(condition("IdentityProvider", "corp", "Ready")).toMatchObject({ status: "True" });
      expect(condition("McpGateway", "main", "Programmed")).toMatchObject({ status: "True" });
    });
    expect(statusOf("McpServer", "remote")).toMatchObject({
      observedGeneration: 1,
      url: "http://remote.example/mcp",
    });
    // Ready follows the workloads: the framework server and the gateway have no available replica yet.
    expect(condition("McpServer", "local", "Ready")).toMatchObject({
      status: "False",
      reason: "DeploymentUnavailable",
    });
    expect(condition("McpGateway", "main", "Ready")).toMatchObject({
      status: "False",
      reason: "Unavailable",
    });
    api.setStatus("Deployment", NS, "local", { availableReplicas: 1 });
    api.setStatus("Deployment", NS, "main", { availableReplicas: 1 });
    await waitFor(() => {
      expect(condition("McpServer", "local", "Ready")).toMatchObject({ status: "True" });
      expect(condition("McpGateway", "main", "Ready")).toMatchObject({ status: "True", reason: "Available" });
    });

    // The wire: server-side apply with our field manager, status as a merge patch on the subresource.
    const patches = api.requests.filter((r) => r.method === "PATCH");
    expect(patches).toEqual(
      expect.arrayContaining([
        {
          method: "PATCH",
          path: "/api/v1/namespaces/gw/configmaps/main-config",
          contentType: "application/apply-patch+yaml",
        },
        {
          method: "PATCH",
          path: "/apis/mcp.svc.dev/v1alpha1/namespaces/gw/mcpservers/remote/status",
          contentType: "application/merge-patch+json",
        },
      ]),
    );
  });

  it("applies an update without a restart and bumps observedGeneration", async () => {
    api.put(
      server("remote", {
        url: "http://remote.example/mcp",
        idp: "corp",
        rbacEnabled: true,
        rbacMode: "deny",
        deniedGroups: ["eng"],
      }),
    );
    await waitFor(() =>
      expect(configYaml().servers[1]).toMatchObject({ rbac_mode: "deny", denied_groups: ["eng"] }),
    );
    await waitFor(() => expect(statusOf("McpServer", "remote").observedGeneration).toBe(2));
  });

  it("tells the gateway's pods of every new configuration with a hash annotation, so the kubelet remounts it now", async () => {
    const podMetadata = (pod: string) => (api.get("Pod", NS, pod)?.metadata ?? {}) as JsonObject;
    const hashOf = (pod: string) =>
      (podMetadata(pod).annotations as Record<string, string> | undefined)?.["mcp.svc.dev/config-hash"];
    await waitFor(() => expect(hashOf("main-7d9c-abcde")).toMatch(/^[0-9a-f]{16}$/));
    const before = hashOf("main-7d9c-abcde");
    api.put(server("remote", { url: "http://remote.example/mcp", idp: "corp", description: "changed" }));
    await waitFor(() => expect(configYaml().servers[1]).toMatchObject({ description: "changed" }));
    await waitFor(() => expect(hashOf("main-7d9c-abcde")).not.toBe(before));
    // Only the gateway Deployment's pods, and their other metadata untouched.
    expect(hashOf("other")).toBeUndefined();
    expect(podMetadata("main-7d9c-abcde").labels).toEqual({ app: "gateway" });
  });

  it("keeps the last valid ConfigMap and reports Accepted=False with the validator's message", async () => {
    const before = api.get("ConfigMap", NS, "main-config")?.data;
    api.put(server("broken", { url: "http://broken.example/mcp", idp: "nowhere" }));
    await waitFor(() =>
      expect(condition("McpServer", "broken", "Accepted")).toMatchObject({
        status: "False",
        reason: "Invalid",
      }),
    );
    expect(condition("McpServer", "broken", "Accepted")?.message).toMatch(
      /^McpServer gw\/broken: spec\.idp: .*nowhere/,
    );
    // `kubectl describe mcpserver broken` shows why: a Warning event about it, valid as a core/v1 Event.
    const eventsAbout = (name: string) =>
      api
        .list("Event", NS)
        .filter((event) => (event.involvedObject as JsonObject).name === name) as (JsonObject & {
        type: string;
        reason: string;
        message: string;
      })[];
    await waitFor(() =>
      expect(eventsAbout("broken")).toContainEqual(
        expect.objectContaining({
          type: "Warning",
          reason: "Invalid",
          involvedObject: expect.objectContaining({ apiVersion: group, kind: "McpServer", name: "broken" }),
          message: expect.stringMatching(/^Accepted=False: McpServer gw\/broken: spec\.idp: .*nowhere/),
        }),
      ),
    );
    for (const event of eventsAbout("broken"))
      expect(await validateKubernetesObject(event as JsonObject)).toEqual([]);
    await waitFor(() =>
      expect(condition("McpGateway", "main", "Accepted")).toMatchObject({
        status: "False",
        reason: "Invalid",
      }),
    );
    expect(condition("McpGateway", "main", "Programmed")).toMatchObject({
      status: "False",
      message: "the last valid configuration stays in ConfigMap main-config",
    });
    // Innocent resources keep being served from the last valid configuration.
    await waitFor(() =>
      expect(condition("McpServer", "remote", "Programmed")).toMatchObject({
        status: "False",
        reason: "GatewayInvalid",
      }),
    );
    expect(condition("McpServer", "remote", "Ready")).toMatchObject({ status: "True" });
    expect(api.get("ConfigMap", NS, "main-config")?.data).toEqual(before);

    // Fixing it programs everything again.
    api.remove("McpServer", NS, "broken");
    await waitFor(() =>
      expect(condition("McpGateway", "main", "Accepted")).toMatchObject({ status: "True" }),
    );
    await waitFor(() =>
      expect(condition("McpServer", "remote", "Programmed")).toMatchObject({ status: "True" }),
    );
  });

  it("removes a deleted server from the config; its Deployment and Service go with it", async () => {
    api.remove("McpServer", NS, "local");
    await waitFor(() =>
      expect(configYaml().servers.map((s: { name: string }) => s.name)).toEqual(["remote"]),
    );
    expect(api.get("Deployment", NS, "local")).toBeUndefined();
    expect(api.get("Service", NS, "local")).toBeUndefined();
  });

  it("reports a resource that would turn on a feature the gateway does not build, and keeps the last valid ConfigMap", async () => {
    const before = api.get("ConfigMap", NS, "main-config")?.data;
    api.put({
      apiVersion: group,
      kind: "McpGateway",
      metadata: { name: "main", namespace: NS },
      spec: gatewaySpec({ security: { rateLimiting: { requestsPerMinute: 9000 } } }),
    });
    await waitFor(() =>
      expect(condition("McpGateway", "main", "Accepted")).toMatchObject({
        status: "False",
        reason: "Invalid",
      }),
    );
    expect(condition("McpGateway", "main", "Accepted")?.message).toMatch(
      /McpGateway gw\/main: spec\.security\.rateLimiting\.requestsPerMinute: must be a whole number from 1 to 5000 when rate limiting is enabled/,
    );
    expect(api.get("ConfigMap", NS, "main-config")?.data).toEqual(before);

    api.put(server("needs-oauth", { url: "http://needs-oauth.example/mcp" }));
    api.put({
      apiVersion: group,
      kind: "McpGateway",
      metadata: { name: "main", namespace: NS },
      spec: gatewaySpec(),
    });
    // Fixed, it is programmed; then it goes, so the next tests see the servers they expect.
    await waitFor(() =>
      expect(configYaml().servers.map((s: { name: string }) => s.name)).toEqual(["needs-oauth", "remote"]),
    );
    await waitFor(() =>
      expect(condition("McpServer", "needs-oauth", "Accepted")).toMatchObject({ status: "True" }),
    );
    await waitFor(() =>
      expect(condition("McpGateway", "main", "Accepted")).toMatchObject({ status: "True" }),
    );
    api.remove("McpServer", NS, "needs-oauth");
    await waitFor(() =>
      expect(configYaml().servers.map((s: { name: string }) => s.name)).toEqual(["remote"]),
    );
  });

  it("puts back an owned object someone deleted, and a secret env entry that is no longer needed goes", async () => {
    api.remove("ConfigMap", NS, "main-config");
    await waitFor(() => expect(configYaml()?.servers).toHaveLength(1));
    api.put({
      apiVersion: group,
      kind: "McpGateway",
      metadata: { name: "main", namespace: NS },
      spec: gatewaySpec({ exporters: {} }),
    });
    await waitFor(() => {
      const env = gatewayEnv();
      expect(env.map((e) => e.name)).toEqual(["LOG_LEVEL"]);
    });
  });

  it("serves /healthz, /readyz and /metrics", async () => {
    expect((await fetch(`${operator.endpoints.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${operator.endpoints.url}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${operator.endpoints.url}/metrics`)).text();
    expect(metrics).toMatch(/svc_operator_reconcile_total\{kind="McpGateway",result="success"\} \d+/);
    expect(metrics).toMatch(/^svc_operator_leader 1$/m);
    // Errors are the result="error" series of the same counter; durations a histogram per kind and result.
    expect(metrics).toContain("# TYPE svc_operator_reconcile_duration_seconds histogram");
    expect(metrics).toMatch(
      /^svc_operator_reconcile_duration_seconds_bucket\{kind="McpServer",result="success",le="\+Inf"\} [1-9]\d*$/m,
    );
    expect(metrics).toMatch(
      /^svc_operator_reconcile_duration_seconds_count\{kind="McpServer",result="success"\} [1-9]/m,
    );
  });

  // API conventions › Typical status properties: every condition carries the generation it describes, a
  // CamelCase reason and a lastTransitionTime; the CRD's pattern refuses any other reason.
  it("writes conditions the API conventions' way", async () => {
    // Earlier tests edited resources; their reconciles may still be writing status, so wait until every status
    // describes its resource's current generation before reading the conditions.
    await waitFor(() => {
      for (const kind of ["McpServer", "IdentityProvider", "McpGateway"]) {
        for (const resource of api.list(kind, NS)) {
          const status = (resource.status ?? {}) as { observedGeneration?: number };
          expect(status.observedGeneration).toBe((resource.metadata as JsonObject).generation);
        }
      }
    });
    for (const kind of ["McpServer", "IdentityProvider", "McpGateway"]) {
      for (const resource of api.list(kind, NS)) {
        const generation = (resource.metadata as JsonObject).generation;
        const { observedGeneration, conditions = [] } = (resource.status ?? {}) as Status & {
          conditions?: { lastTransitionTime?: string; observedGeneration?: number }[];
        };
        expect(observedGeneration).toBe(generation);
        expect(conditions.map((c) => c.type)).toEqual(["Accepted", "Programmed", "Ready"]);
        for (const c of conditions) {
          expect(c.reason).toMatch(/^[A-Z][A-Za-z0-9]*$/);
          expect(c.observedGeneration).toBe(generation);
          expect(Number.isNaN(Date.parse(String(c.lastTransitionTime)))).toBe(false);
        }
      }
    }
    const refused = await fetch(
      `${api.url}/apis/mcp.svc.dev/v1alpha1/namespaces/${NS}/mcpservers/remote/status`,
      {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({
          status: {
            conditions: [
              {
                type: "Ready",
                status: "True",
                reason: "not camel",
                message: "",
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        }),
      },
    );
    expect(refused.status).toBe(422);
  });
});
