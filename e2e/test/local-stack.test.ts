import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { KubeletConfigMapVolume } from "svc-testkit/kubelet-volume";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RedisServer } from "../../gateway/test/kv/redis-server.ts";
import { GROUP_VERSION } from "../../operator/src/api/names.ts";
import { silentLogger } from "../../operator/src/controller/log.ts";
import { type RunningOperator, startOperator } from "../../operator/src/controller/operator.ts";
import type { FakeKubeApi } from "../../operator/src/testing/fake-kube-api.ts";
import type { JsonObject } from "../../operator/src/testing/merge.ts";
import { fakeClusterWithCrds } from "../../operator/test/support/fake-cluster.ts";
import { probeStatus } from "../src/probe-status.ts";
import { startFrameworkServer } from "./support/framework-server.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import {
  AUDIENCE,
  type IdentityProviderProcess,
  identityProviderResource,
  startIdentityProviderProcess,
} from "./support/identity-provider-process.ts";
import { repoRoot } from "./support/paths.ts";
import type { ListeningProcess } from "./support/spawn-listening.ts";
import { startUpstream, type Upstream } from "./support/upstream.ts";

// The whole local stack on loopback: resources go into the fake Kubernetes API server; the operator (real
// @kubernetes/client-node over HTTP) renders the ConfigMap; a kubelet stand-in writes it into a directory
// the way the kubelet does (..data swap); `svc-gateway start` serves from that directory and reloads on
// change; an MCP client with an access token from a real OpenID provider (oidc-provider, its own process)
// calls a real MCP server through it. The gateway runs as in the pod: no anonymous access, tokens checked
// against the IdentityProvider resource's JWKS, groups from the token decide RBAC.

const run = promisify(execFile);
const NS = "svc";
const group = GROUP_VERSION;
let api: FakeKubeApi;
let operator: RunningOperator;
let gateway: ListeningProcess;
let frameworkServer: ListeningProcess & { mcpUrl: string };
let upstreamB: Upstream;
let redis: RedisServer;
let idp: IdentityProviderProcess;
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

// The users: clients of the identity provider whose tokens carry these groups.
const USERS = { engineer: ["engineering"], contractor: ["contractors"] };
type User = keyof typeof USERS;

async function callTool(
  user: User,
  serverName: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<string> {
  const client = new Client({ name: "e2e", version: "1.0.0" });
  const headers = { authorization: `Bearer ${await idp.token(user)}` };
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/${serverName}/mcp`), {
      requestInit: { headers },
    }),
  );
  try {
    const result = await client.callTool({ name: tool, arguments: args });
    return (result.content as { type: string; text: string }[])[0]?.text ?? "";
  } finally {
    await client.close();
  }
}

/** The HTTP status the gateway answers `user` (no token at all when undefined) on a server's endpoint. */
async function status(user: User | undefined, serverName: string): Promise<number> {
  const headers: Record<string, string> =
    user === undefined ? {} : { authorization: `Bearer ${await idp.token(user)}` };
  return probeStatus(`${gateway.url}/${serverName}/mcp`, headers);
}

/** alpha: the framework-built server, open to engineering only until a test changes that. */
const alphaSpec = (overrides: JsonObject = {}): JsonObject => ({
  url: frameworkServer.mcpUrl,
  upstreamAuthType: "none",
  idp: "e2e",
  rbacEnabled: true,
  rbacMode: "allow",
  allowedGroups: ["engineering"],
  ...overrides,
});

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  [frameworkServer, upstreamB, redis, idp] = await Promise.all([
    startFrameworkServer(join(scratch, "hello-tools")),
    startUpstream("beta"),
    RedisServer.start(),
    startIdentityProviderProcess(USERS),
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

  // kubectl apply: an McpGateway, the identity provider, and one server.
  api.put({
    apiVersion: group,
    kind: "McpGateway",
    metadata: { name: "svc-gateway", namespace: NS },
    spec: { configMapName: "svc-gateway-config" },
  });
  api.put(identityProviderResource(idp.issuer, NS, group));
  api.put(server("alpha", alphaSpec()));

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
  await Promise.all([frameworkServer?.stop(), upstreamB?.close(), api?.close(), redis?.kill(), idp?.stop()]);
  rmSync(scratch, { recursive: true, force: true });
});

describe("local stack: fake API server → operator → ConfigMap volume → gateway → MCP server", () => {
  it("lets an MCP client with a real token call a tool on the server the resources describe", async () => {
    // alpha is a server built with our framework (svc init + svc build): its template tool `hello`.
    expect(await callTool("engineer", "alpha", "hello", { name: "e2e" })).toContain("e2e");
    await waitFor(() => expect(condition("McpServer", "alpha", "Ready")?.status).toBe("True"));
    expect(condition("IdentityProvider", "e2e", "Ready")?.status).toBe("True");
    // Closed as in production: no anonymous access, a token is required and its groups decide.
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as Record<string, unknown>;
    expect(health.anonymous_access).not.toBe("enabled");
    expect(await status(undefined, "alpha")).toBe(401);
    expect(await status("contractor", "alpha")).toBe(403);
    expect(await status("engineer", "alpha")).toBe(200);
    // Shared state in a real Redis, as with several gateway replicas.
    expect(health.kvstore).toBe("ok");
  });

  it("denies a group as soon as the resource says so, without a restart", async () => {
    api.put(
      server("alpha", alphaSpec({ rbacMode: "deny", deniedGroups: ["engineering"], allowedGroups: [] })),
    );
    await waitFor(async () => expect(await status("engineer", "alpha")).toBe(403));
    // The mode flipped, so the contractor who was refused before is let in now.
    expect(await callTool("contractor", "alpha", "hello", { name: "contractor" })).toContain("contractor");
    api.put(server("alpha", alphaSpec()));
    await waitFor(async () => expect(await status("engineer", "alpha")).toBe(200));
    expect(await status("contractor", "alpha")).toBe(403);
    expect(gateway.logs.filter((line) => line.includes('"msg":"listening"'))).toHaveLength(1);
  });

  it("picks up a new server and a disabled one without a restart", async () => {
    api.put(server("beta", { url: upstreamB.url, upstreamAuthType: "none", idp: "e2e" }));
    await waitFor(async () =>
      expect(await callTool("contractor", "beta", "add", { a: 2, b: 3 })).toBe("beta: 5"),
    );
    api.put(server("alpha", alphaSpec({ enabled: false })));
    await waitFor(async () => expect(await status("engineer", "alpha")).toBe(404));
    api.put(server("alpha", alphaSpec()));
    await waitFor(async () => expect(await status("engineer", "alpha")).toBe(200));
    // One process all along: reloaded from the swapped ..data directory, never restarted.
    expect(gateway.logs.filter((line) => line.includes('"msg":"listening"'))).toHaveLength(1);
  });

  it("reports an invalid resource in its status and keeps traffic flowing on the last valid configuration", async () => {
    api.put(server("broken", { url: "http://127.0.0.1:1/mcp", upstreamAuthType: "none", idp: "nowhere" }));
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
    expect(await callTool("engineer", "beta", "add", { a: 2, b: 3 })).toBe("beta: 5");
    expect(await callTool("engineer", "alpha", "hello", { name: "still" })).toContain("still");
    expect(await status("engineer", "broken")).toBe(404);
    // Removing the broken resource unblocks the gateway's configuration.
    api.remove("McpServer", NS, "broken");
    await waitFor(() => expect(condition("McpGateway", "svc-gateway", "Programmed")?.status).toBe("True"));
  });

  it("answers the kind e2e's MCP check script the same way (e2e/scripts/kind-mcp-check.ts)", async () => {
    const script = join(repoRoot, "e2e", "scripts", "kind-mcp-check.ts");
    const common = [script, "--url", gateway.url, "--timeout", "30"];
    const as = (user: User) => [
      "--token-url",
      `${idp.url}/token`,
      "--client",
      idp.credentials(user),
      "--resource",
      AUDIENCE,
    ];
    const { stdout } = await run(process.execPath, [
      ...common,
      ...as("engineer"),
      "--server",
      "alpha",
      "--tool",
      "hello",
      "--args",
      '{"name":"kind"}',
      "--expect",
      "kind",
    ]);
    expect(stdout).toContain("ok");
    await run(process.execPath, [
      ...common,
      ...as("contractor"),
      "--server",
      "alpha",
      "--expect-status",
      "403",
    ]);
    await run(process.execPath, [...common, "--server", "alpha", "--expect-status", "401"]);
    // An expectation that does not hold fails the script (exit 1), so the kind run cannot pass by accident.
    await expect(
      run(process.execPath, [
        script,
        "--url",
        gateway.url,
        "--timeout",
        "1",
        ...as("contractor"),
        "--server",
        "alpha",
        "--expect-status",
        "200",
      ]),
    ).rejects.toMatchObject({ code: 1 });
  });
});
