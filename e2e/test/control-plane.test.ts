import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { freePort } from "../../framework/test/helpers/processes.ts";
import { GROUP_VERSION } from "../../operator/src/api/names.ts";
import { buildCrd } from "../../operator/src/crd/build-crds.ts";
import type { FakeKubeApi } from "../../operator/src/testing/fake-kube-api.ts";
import type { JsonObject } from "../../operator/src/testing/merge.ts";
import { fakeClusterWithCrds } from "../../operator/test/support/fake-cluster.ts";
import { probeStatus } from "../src/probe-status.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import {
  type IdentityProviderProcess,
  identityProviderResource,
  identityProvidersYaml,
  startIdentityProviderProcess,
} from "./support/identity-provider-process.ts";
import { repoRoot } from "./support/paths.ts";
import { type ListeningProcess, spawnListening } from "./support/spawn-listening.ts";
import { serveStateless } from "./support/upstream.ts";

// The control plane with real processes: `svc-operator run` against the fake Kubernetes API server serves the
// control-plane API from an OrganizationPolicy and three McpGateways; three `svc-gateway start` processes call it,
// two in distributed mode (their own YAML, the organization's policy merged in) and one in centralized mode (no file:
// the whole configuration from the operator). A change of the OrganizationPolicy reaches every gateway within 5 s;
// with the operator killed they keep enforcing the last policy (one of them restarted from its cache file), DEGRADED;
// wrong keys and unknown ids are refused with 401, visible in the operator's log and metrics.

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const NS = "svc";
const group = GROUP_VERSION;
// auditor spends its rate limit; the others must keep theirs for the later tests.
const USERS = { engineer: ["engineering"], contractor: ["contractors"], auditor: ["audit"] };
type User = keyof typeof USERS;
const PROPAGATION_MS = 5000;

const GATEWAYS = {
  a: { id: "0b6b2c1e-6a1f-4c38-9d1e-0d8e4b6f7a11", key: "key-a-7f3c9e1d2b4a6c8e" },
  b: { id: "1c7c3d2f-7b2a-4d49-8e2f-1e9f5c7a8b22", key: "key-b-8a4d0f2e3c5b7d9f" },
  c: { id: "2d8d4e3a-8c3b-4e5a-9f3a-2fa06d8b9c33", key: "key-c-9b5e1a3f4d6c8e0a" },
} as const;
type GatewayName = keyof typeof GATEWAYS;

const scratch = mkdtempSync(join(tmpdir(), "svc-control-plane-"));
const waitFor = <T>(check: () => T | Promise<T>, timeout = 20_000) =>
  vi.waitFor(check, { timeout, interval: 50 });

let api: FakeKubeApi;
let idp: IdentityProviderProcess;
let upstream: EchoUpstream;
let operator: OperatorProcess;
let controlPlanePort: number;
const gateways = {} as Record<GatewayName, ListeningProcess>;

// ---- an upstream whose tools show what the gateway did: echo (scrubbing) and a call held open (in-flight) --------

interface EchoUpstream {
  url: string;
  /** Calls of `hold` wait until this is called. */
  release(): void;
  held: number;
  close(): Promise<void>;
}

async function startEchoUpstream(): Promise<EchoUpstream> {
  const state = { held: 0, waiting: [] as (() => void)[] };
  const server: Server = createHttpServer(async (request, response) => {
    const mcp = new McpServer({ name: "echo", version: "1.0.0" });
    mcp.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: "text", text: `echo: ${text}` }],
    }));
    mcp.registerTool("hold", { inputSchema: {} }, async () => {
      state.held += 1;
      await new Promise<void>((resolve) => state.waiting.push(resolve));
      return { content: [{ type: "text", text: "held call finished" }] };
    });
    await serveStateless(mcp, request, response);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    release: () => {
      for (const resolve of state.waiting.splice(0)) resolve();
    },
    get held() {
      return state.held;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- svc-operator run as its own process ------------------------------------------------------------------------

interface OperatorProcess {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  healthUrl: string;
  stop(): Promise<void>;
}

async function startOperatorProcess(): Promise<OperatorProcess> {
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "operator", "bin", "svc-operator.js"),
      "run",
      "--server",
      api.url,
      "--no-leader-election",
      "--health-host",
      "127.0.0.1",
      "--health-port",
      "0",
      "--control-plane-host",
      "127.0.0.1",
      "--control-plane-port",
      String(controlPlanePort),
    ],
    { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (line) => {
    try {
      logs.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      logs.push({ msg: line });
    }
  });
  const exited = once(child, "exit");
  await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`svc-operator exited: ${JSON.stringify(logs)}`);
    expect(logs.some((line) => line.msg === "control-plane API listening")).toBe(true);
    // Logged on its own schedule, not always before the control-plane API: the health URL is in this one.
    expect(logs.some((line) => line.msg === "operator started")).toBe(true);
  });
  const started = logs.find((line) => line.msg === "operator started");
  return {
    child,
    logs,
    healthUrl: String(started?.endpoints),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await exited;
    },
  };
}

// ---- the resources ------------------------------------------------------------------------------------------------

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function organizationPolicy(spec: JsonObject): JsonObject {
  return {
    apiVersion: group,
    kind: "OrganizationPolicy",
    metadata: { name: "acme", namespace: NS },
    spec: { organizationId: "acme", ...spec },
  };
}

function mcpGateway(name: GatewayName): JsonObject {
  return {
    apiVersion: group,
    kind: "McpGateway",
    metadata: { name: `gw-${name}`, namespace: NS },
    spec: {
      controlPlaneClient: {
        gatewayId: GATEWAYS[name].id,
        organizationPolicy: "acme",
        apiKeySha256: { secretKeyRef: { name: "gateway-keys", key: `gw-${name}` } },
      },
    },
  };
}

/** A distributed gateway's own YAML: its server and identity provider; the organization's policy comes on top. */
function distributedConfig(name: GatewayName, cacheTtl = 60): string {
  const file = join(scratch, `gw-${name}.yaml`);
  writeFileSync(
    file,
    [
      'version: "1.0"',
      "control_plane:",
      `  url: http://127.0.0.1:${controlPlanePort}`,
      "  api_key: ${CP_API_KEY}",
      `  gateway_id: ${GATEWAYS[name].id}`,
      `  cache_ttl: ${cacheTtl}`,
      ...identityProvidersYaml(idp.issuer),
      "servers:",
      "  - name: echo",
      `    url: ${upstream.url}`,
      "    upstream_auth_type: none",
      "",
    ].join("\n"),
  );
  return file;
}

function startGateway(name: GatewayName): Promise<ListeningProcess> {
  const common = {
    CP_API_KEY: GATEWAYS[name].key,
    SVC_CONTROL_PLANE_CACHE_FILE: join(scratch, `gw-${name}.cache.json`),
    SVC_CONTROL_PLANE_HEARTBEAT_SECONDS: "1",
  };
  if (name !== "c") return startGatewayProcess(distributedConfig(name), common);
  // Centralized: no configuration file, the control plane from the environment.
  return spawnListening(
    [join(repoRoot, "gateway", "bin", "svc-gateway.js"), "start", "--port", "0", "--host", "127.0.0.1"],
    {
      ...common,
      SVC_DRAIN_DELAY_SECONDS: "0",
      SVC_CONTROL_PLANE_URL: `http://127.0.0.1:${controlPlanePort}`,
      SVC_CONTROL_PLANE_API_KEY: GATEWAYS.c.key,
      SVC_GATEWAY_ID: GATEWAYS.c.id,
    },
  );
}

// ---- what a client sees -----------------------------------------------------------------------------------------

async function withClient<T>(
  gateway: GatewayName,
  user: User,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const headers = { authorization: `Bearer ${await idp.token(user)}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateways[gateway].url}/echo/mcp`), {
      requestInit: { headers },
    }),
  );
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

async function echo(gateway: GatewayName, user: User, text: string): Promise<string> {
  return withClient(gateway, user, async (client) => {
    const result = await client.callTool({ name: "echo", arguments: { text } });
    return (result.content as { text: string }[])[0]?.text ?? "";
  });
}

async function status(gateway: GatewayName, user: User): Promise<number> {
  return probeStatus(`${gateways[gateway].url}/echo/mcp`, {
    authorization: `Bearer ${await idp.token(user)}`,
  });
}

async function health(
  gateway: GatewayName,
): Promise<{ status: string; control_plane?: Record<string, unknown> }> {
  return (await (await fetch(`${gateways[gateway].url}/health`)).json()) as {
    status: string;
    control_plane?: Record<string, unknown>;
  };
}

const ALL: GatewayName[] = ["a", "b", "c"];

/** Waits until `check` holds on every gateway; returns how long the slowest took from `since`. */
async function onEveryGateway(
  since: number,
  check: (gateway: GatewayName) => Promise<void>,
): Promise<number> {
  const times = await Promise.all(
    ALL.map(async (gateway) => {
      await waitFor(() => check(gateway), 15_000);
      return Date.now() - since;
    }),
  );
  return Math.max(...times);
}

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  [idp, upstream, controlPlanePort] = await Promise.all([
    startIdentityProviderProcess(USERS),
    startEchoUpstream(),
    freePort(),
  ]);
  // kubectl apply: the key digests, the organization's policy, the three gateways, and what gateway c serves.
  api.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "gateway-keys", namespace: NS },
    data: Object.fromEntries(
      ALL.map((name) => [`gw-${name}`, Buffer.from(sha256(GATEWAYS[name].key)).toString("base64")]),
    ),
  });
  api.put(organizationPolicy({}));
  for (const name of ALL) api.put(mcpGateway(name));
  api.put(identityProviderResource(idp.issuer, NS, group));
  api.put({
    apiVersion: group,
    kind: "McpServer",
    metadata: { name: "echo", namespace: NS },
    spec: { url: upstream.url, upstreamAuthType: "none" },
  });
  operator = await startOperatorProcess();
  // Gateway c's configuration is the ConfigMap the operator renders for gw-c.
  await waitFor(() => expect(api.get("ConfigMap", NS, "gw-c-config")).toBeDefined());
  const started = await Promise.all(ALL.map((name) => startGateway(name)));
  ALL.forEach((name, index) => {
    gateways[name] = started[index] as ListeningProcess;
  });
});

afterAll(async () => {
  upstream?.release();
  await Promise.all(ALL.map((name) => gateways[name]?.stop()));
  await operator?.stop();
  await Promise.all([idp?.stop(), upstream?.close(), api?.close()]);
  rmSync(scratch, { recursive: true, force: true });
});

describe("control plane: svc-operator run serves three gateways (two distributed, one centralized)", () => {
  it("activates every gateway, which serves and reports its heartbeat into its McpGateway status", async () => {
    for (const name of ALL) {
      expect(await echo(name, "contractor", "hello")).toBe("echo: hello");
      const body = await health(name);
      expect(body.status).toBe("healthy");
      expect(body.control_plane).toMatchObject({ state: "connected", organization_id: "acme" });
    }
    // kubectl get mcpgateways: the CRD's printer columns read these fields.
    const columns =
      (
        buildCrd("McpGateway").spec as {
          versions: { additionalPrinterColumns: { name: string; jsonPath: string }[] }[];
        }
      ).versions[0]?.additionalPrinterColumns ?? [];
    const heartbeatColumn = columns.find((column) => column.name === "Last-Heartbeat");
    expect(heartbeatColumn?.jsonPath).toBe(".status.controlPlane.lastHeartbeat");
    await waitFor(() => {
      for (const name of ALL) {
        const reported = (api.get("McpGateway", NS, `gw-${name}`)?.status as JsonObject | undefined)
          ?.controlPlane as JsonObject | undefined;
        expect(reported).toMatchObject({
          gatewayId: GATEWAYS[name].id,
          health: "HEALTHY",
          policyGeneration: 1,
        });
        expect(Date.parse(String(reported?.lastHeartbeat))).toBeGreaterThan(Date.now() - 10_000);
      }
    });
    const reportedMode = (name: GatewayName) =>
      (
        (api.get("McpGateway", NS, `gw-${name}`)?.status as JsonObject | undefined)?.controlPlane as
          | JsonObject
          | undefined
      )?.mode;
    const modes = ALL.map(reportedMode);
    expect(modes).toEqual(["distributed", "distributed", "centralized"]);
  });

  it("enforces a changed organization policy on every gateway within 5 s, without failing a call in flight", async () => {
    // A call held open by the upstream across the change: it started on the old snapshot and must finish.
    const inFlight = echoHeld("a");
    await waitFor(() => expect(upstream.held).toBe(1));

    const changedAt = Date.now();
    api.put(
      organizationPolicy({
        scrubbing: { enabled: true, customRules: [{ pattern: "ACME-\\d{4}", method: "mask" }] },
        serverRbac: { rbacEnabled: true, rbacMode: "deny", deniedGroups: ["contractors"] },
        rateLimit: { requestsPerMinute: 50, windowSeconds: 60 },
      }),
    );
    const slowest = await onEveryGateway(changedAt, async (name) => {
      expect(await status(name, "contractor")).toBe(403);
      expect(await echo(name, "engineer", "id ACME-1234")).not.toContain("ACME-1234");
    });
    expect(slowest).toBeLessThan(PROPAGATION_MS);
    process.stderr.write(`policy change enforced on all three gateways after ${slowest} ms\n`);

    upstream.release();
    expect(await inFlight).toBe("held call finished");

    // The organization's rate limit: 50 per minute per user, enforced by each gateway.
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push(await status("b", "auditor"));
    expect(statuses).toContain(429);
  });

  it("refuses a file reload that changes control_plane: the control plane is chosen at start", async () => {
    distributedConfig("b", 120);
    await waitFor(() =>
      expect(gateways.b.logs.some((line) => line.includes("cannot change while the gateway runs"))).toBe(
        true,
      ),
    );
    distributedConfig("b");
    expect(await status("b", "contractor")).toBe(403);
  });

  it("refuses a wrong key and an unknown gateway id with 401, in the operator's log and metrics", async () => {
    const base = `http://127.0.0.1:${controlPlanePort}/v1/gateways`;
    const wrongKey = await fetch(`${base}/${GATEWAYS.a.id}/policy`, {
      headers: { authorization: "Bearer not-the-key" },
    });
    expect(wrongKey.status).toBe(401);
    const unknown = await fetch(`${base}/9f9f9f9f-0000-4000-8000-000000000000/policy`, {
      headers: { authorization: `Bearer ${GATEWAYS.a.key}` },
    });
    expect(unknown.status).toBe(401);
    // Gateway a's own key does not open gateway b's policy.
    const otherGateway = await fetch(`${base}/${GATEWAYS.b.id}/policy`, {
      headers: { authorization: `Bearer ${GATEWAYS.a.key}` },
    });
    expect(otherGateway.status).toBe(401);
    const otherOrganization = await fetch(`${base}/${GATEWAYS.a.id}/policy`, {
      headers: { authorization: `Bearer ${GATEWAYS.a.key}`, "x-svc-organization-id": "globex" },
    });
    expect(otherOrganization.status).toBe(403);
    await waitFor(() => {
      const reasons = operator.logs
        .filter((line) => line.msg === "control-plane request refused")
        .map((line) => line.reason);
      expect(reasons).toEqual(expect.arrayContaining(["wrong_key", "unknown_gateway", "other_organization"]));
    });
    const metrics = await (await fetch(`${operator.healthUrl}/metrics`)).text();
    expect(metrics).toMatch(/svc_operator_control_plane_refused_total\{reason="wrong_key"\} 2/);
    expect(metrics).toMatch(/svc_operator_control_plane_refused_total\{reason="unknown_gateway"\} 1/);
    // Nothing of the key is logged.
    expect(JSON.stringify(operator.logs)).not.toContain(GATEWAYS.a.key);
  });

  it("keeps enforcing the last policy with the control plane down (DEGRADED), also after a restart, and recovers", async () => {
    await operator.stop();
    await onEveryGateway(Date.now(), async (name) => {
      const body = await health(name);
      expect(body.status).toBe("degraded");
      expect(body.control_plane).toMatchObject({ state: "unreachable", policy_generation: 2 });
      expect(typeof body.control_plane?.policy_age_seconds).toBe("number");
    });
    for (const name of ALL) {
      expect(await status(name, "contractor")).toBe(403);
      expect(await echo(name, "engineer", "ACME-9876")).not.toContain("ACME-9876");
    }

    // Restarted during the outage: starts from its cache file and enforces the same policy.
    await gateways.a.stop();
    gateways.a = await startGateway("a");
    expect((await health("a")).status).toBe("degraded");
    expect(await status("a", "contractor")).toBe(403);
    expect(await echo("a", "engineer", "ACME-5555")).not.toContain("ACME-5555");

    operator = await startOperatorProcess();
    await onEveryGateway(Date.now(), async (name) => {
      const body = await health(name);
      expect(body.status).toBe("healthy");
      expect(body.control_plane).toMatchObject({ state: "connected" });
    });
    expect(await status("a", "contractor")).toBe(403);
  });
});

/** Starts the upstream's `hold` tool through gateway `name`; resolves with its text once released. */
function echoHeld(name: GatewayName): Promise<string> {
  return withClient(name, "engineer", async (client) => {
    const result = await client.callTool({ name: "hold", arguments: {} });
    return (result.content as { text: string }[])[0]?.text ?? "";
  });
}
