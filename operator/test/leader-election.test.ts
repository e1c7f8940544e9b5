import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";
import { operatorDir } from "./paths.ts";
import { fakeClusterWithCrds } from "./support/fake-cluster.ts";

// Two `svc-operator run` processes against the fake API server: one leader; SIGKILL it and the other takes
// over once the Lease expires; SIGTERM releases the Lease at once. Short lease timings keep this quick.

interface Instance {
  identity: string;
  process: ChildProcess;
  endpoints: Promise<string>;
  exit: Promise<number | null>;
}

let api: FakeKubeApi;
const instances: Instance[] = [];
const waitFor = <T>(check: () => T) => vi.waitFor(check, { timeout: 15_000, interval: 25 });

function launch(identity: string): Instance {
  const child = spawn(
    process.execPath,
    [
      `${operatorDir}/bin/svc-operator.js`,
      "run",
      "--server",
      api.url,
      "--identity",
      identity,
      "--lease-namespace",
      "ops",
      "--lease-duration",
      "2",
      "--renew-deadline",
      "1.5",
      "--retry-period",
      "0.2",
      "--health-host",
      "127.0.0.1",
      "--health-port",
      "0",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const endpoints = new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; endpoints?: string };
      if (entry.msg === "operator started" && entry.endpoints) resolve(entry.endpoints);
    });
    child.once("exit", () => reject(new Error(`${identity} exited before it started`)));
  });
  endpoints.catch(() => undefined);
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const instance = { identity, process: child, endpoints, exit };
  instances.push(instance);
  return instance;
}

const lease = () =>
  (api.get("Lease", "ops", "svc-operator")?.spec ?? {}) as {
    holderIdentity?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseTransitions?: number;
  };
const leaderGauge = async (instance: Instance) => {
  const text = await (await fetch(`${await instance.endpoints}/metrics`)).text();
  return /^svc_operator_leader (\d)$/m.exec(text)?.[1];
};

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
});

afterAll(async () => {
  for (const instance of instances) instance.process.kill("SIGKILL");
  await Promise.all(instances.map((instance) => instance.exit));
  await api?.close();
});

describe("leader election", () => {
  it("elects one leader, fails over after the lease expires, and releases the lease on SIGTERM", async () => {
    const a = launch("operator-a");
    const b = launch("operator-b");
    await Promise.all([a.endpoints, b.endpoints]);
    // Exactly one instance leads: the one the Lease names.
    await waitFor(async () => {
      const holder = lease().holderIdentity;
      expect([holder, await leaderGauge(a), await leaderGauge(b)]).toEqual(
        holder === "operator-a" ? ["operator-a", "1", "0"] : ["operator-b", "0", "1"],
      );
    });
    const standbyNow = lease().holderIdentity === "operator-a" ? b : a;
    expect((await fetch(`${await standbyNow.endpoints}/readyz`)).status).toBe(200);

    // Only the leader reconciles.
    api.put({
      apiVersion: "mcp.svc.dev/v1alpha1",
      kind: "McpGateway",
      metadata: { name: "g", namespace: "ops" },
      spec: {},
    });
    await waitFor(() => expect(api.get("ConfigMap", "ops", "g-config")).toBeDefined());

    // A crash does not release the lease: the standby waits for it to expire, then takes over.
    // (Whoever holds the lease right now: on a starved machine it may have moved since.)
    const leader = lease().holderIdentity === "operator-a" ? a : b;
    const standby = leader === a ? b : a;
    const transitionsBefore = lease().leaseTransitions ?? 0;
    leader.process.kill("SIGKILL");
    await leader.exit;
    const lastRenewal = Date.parse(lease().renewTime ?? "");
    await waitFor(() => expect(lease().holderIdentity).toBe(standby.identity));
    expect(Date.parse(lease().acquireTime ?? "") - lastRenewal).toBeGreaterThanOrEqual(2000);
    expect(lease().leaseTransitions).toBe(transitionsBefore + 1);
    await waitFor(async () => expect(await leaderGauge(standby)).toBe("1"));
    api.put({
      apiVersion: "mcp.svc.dev/v1alpha1",
      kind: "McpServer",
      metadata: { name: "s", namespace: "ops" },
      spec: { url: "http://s.example/mcp", upstreamAuthType: "none" },
    });
    await waitFor(() =>
      expect(
        String((api.get("ConfigMap", "ops", "g-config")?.data as JsonObject | undefined)?.["config.yaml"]),
      ).toContain("http://s.example/mcp"),
    );

    // Graceful shutdown: exit 0 and the lease is free for the next instance straight away.
    standby.process.kill("SIGTERM");
    expect(await standby.exit).toBe(0);
    expect(lease().holderIdentity).toBe("");
  }, 40_000);
});
