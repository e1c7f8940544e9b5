import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RedisServer } from "../../gateway/test/kv/redis-server.ts";
import { startFrameworkServer } from "./support/framework-server.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import {
  AUDIENCE,
  type IdentityProviderProcess,
  identityProvidersYaml,
  startIdentityProviderProcess,
} from "./support/identity-provider-process.ts";
import { repoRoot } from "./support/paths.ts";
import { type ServiceProxy, startServiceProxy } from "./support/service-proxy.ts";
import type { ListeningProcess } from "./support/spawn-listening.ts";

// A rolling restart of the gateway under traffic, as the kind e2e does it with `kubectl rollout restart` and the
// chart's strategy (maxSurge 1, maxUnavailable 0, preStop, drain): the traffic script the kind e2e runs in the
// cluster (e2e/scripts/kind-traffic.ts) calls a framework-built server through a Service stand-in while a second
// gateway replica comes up, the first leaves the endpoints and gets SIGTERM, drains and exits. Sessions live in a
// shared Redis, so they carry over to the new replica. Not one call may fail.

const scratch = mkdtempSync(join(tmpdir(), "svc-rolling-"));
const waitFor = <T>(check: () => T | Promise<T>, timeout = 30_000) =>
  vi.waitFor(check, { timeout, interval: 100 });
let redis: RedisServer;
let idp: IdentityProviderProcess;
let upstream: ListeningProcess & { mcpUrl: string };
let service: ServiceProxy;
const gateways: ListeningProcess[] = [];
let traffic: ChildProcess | undefined;

/** A gateway replica as the pod runs it, with the chart's drain delay shortened; resolved once it is ready. */
async function startReplica(configFile: string): Promise<ListeningProcess> {
  const replica = await startGatewayProcess(configFile, {
    REDIS_URL: redis.url,
    SVC_DRAIN_DELAY_SECONDS: "1",
    SVC_DRAIN_TIMEOUT_SECONDS: "20",
  });
  gateways.push(replica);
  await waitFor(async () => expect((await fetch(`${replica.url}/readiness`)).status).toBe(200));
  return replica;
}

const served = (replica: ListeningProcess) =>
  replica.logs.filter((line) => line.includes('"msg":"request"') && line.includes('"method":"tools/call"'))
    .length;

beforeAll(async () => {
  [redis, idp, upstream] = await Promise.all([
    RedisServer.start(),
    startIdentityProviderProcess({ engineer: ["engineering"] }),
    startFrameworkServer(join(scratch, "hello-tools")),
  ]);
}, 120_000);

afterAll(async () => {
  traffic?.kill("SIGKILL");
  await service?.close();
  await Promise.all(gateways.map((gateway) => gateway.stop()));
  await Promise.all([upstream?.stop(), idp?.stop(), redis?.kill()]);
  rmSync(scratch, { recursive: true, force: true });
});

describe("rolling restart of the gateway under traffic", () => {
  it("loses not one call while the old replica drains and the new one takes over", async () => {
    const configFile = join(scratch, "gateway.yaml");
    writeFileSync(
      configFile,
      [
        'version: "1.0"',
        ...identityProvidersYaml(idp.issuer),
        "servers:",
        "  - name: hello-tools",
        `    url: ${upstream.mcpUrl}`,
        "    upstream_auth_type: none",
        "    idp: e2e",
        "",
      ].join("\n"),
    );
    const old = await startReplica(configFile);
    service = await startServiceProxy([old.url]);

    const stopFile = join(scratch, "stop-traffic");
    traffic = spawn(
      process.execPath,
      [
        join(repoRoot, "e2e", "scripts", "kind-traffic.ts"),
        ...["--url", service.url, "--server", "hello-tools"],
        ...[
          "--token-url",
          `${idp.url}/token`,
          "--client",
          idp.credentials("engineer"),
          "--resource",
          AUDIENCE,
        ],
        ...["--tool", "hello", "--args", '{"name":"traffic"}', "--expect", "traffic"],
        ...["--stop-file", stopFile, "--calls-per-session", "10", "--min-calls", "40"],
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const output: string[] = [];
    for (const stream of [traffic.stdout, traffic.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => output.push(line));
    }
    const exited = once(traffic, "exit");
    await waitFor(() => expect(output.join("\n")).toContain("traffic flowing"));

    // maxSurge 1: the new replica is ready before the old one goes.
    const fresh = await startReplica(configFile);
    service.setEndpoints([old.url, fresh.url]);
    // The old pod terminates: out of the endpoints first, then SIGTERM; it drains and exits cleanly.
    service.setEndpoints([fresh.url]);
    expect(await old.stop()).toBe(0);
    expect(old.logs.join("\n")).toContain('"msg":"drained"');
    // Traffic goes on through the new replica alone.
    const before = served(fresh);
    await waitFor(() => expect(served(fresh), output.join("\n")).toBeGreaterThan(before + 20), 100_000);

    writeFileSync(stopFile, "");
    const [code] = await exited;
    const summary = JSON.parse(output.find((line) => line.startsWith("{")) ?? "{}") as {
      calls?: number;
      failed?: number;
      errors?: string[];
    };
    expect(summary, output.join("\n")).toMatchObject({ failed: 0, errors: [] });
    expect(summary.calls).toBeGreaterThan(40);
    expect(code).toBe(0);
  }, 180_000);
});
