import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { GROUP_VERSION, KINDS, type Kind } from "../../operator/src/api/names.ts";
import { readResources } from "../../operator/src/cli/read-resources.ts";
import { silentLogger } from "../../operator/src/controller/log.ts";
import { type RunningOperator, startOperator } from "../../operator/src/controller/operator.ts";
import type { FakeKubeApi } from "../../operator/src/testing/fake-kube-api.ts";
import type { JsonObject } from "../../operator/src/testing/merge.ts";
import { fakeClusterWithCrds } from "../../operator/test/support/fake-cluster.ts";
import { type KindStep, kindScriptPath, readKindSteps } from "./support/kind-steps.ts";
import { repoRoot } from "./support/paths.ts";

// The kind e2e's Kubernetes steps (e2e/kind/run.sh, read from the script) run here against the fake API server
// with the real operator: the same `helm install` values, the same files applied and deleted, the same
// `kubectl patch` bodies, and every `kubectl wait` must come true. What a cluster adds is stood in for: the
// Deployment controller and kubelet (a Deployment's replicas become available). The MCP checks the script
// runs between these steps run in local-stack.test.ts with the same check script against a real gateway.

const run = promisify(execFile);
const NS = "svc-gateway";
const steps = readKindSteps();
let api: FakeKubeApi;
let operator: RunningOperator;
let deploymentController: NodeJS.Timeout;
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 30_000, interval: 50 });

const kindByResourceName = (name: string): Kind => {
  const kind = (Object.keys(KINDS) as Kind[]).find((candidate) => candidate.toLowerCase() === name);
  if (!kind) throw new Error(`run.sh names ${name}, not one of our kinds`);
  return kind;
};
const known = (object: JsonObject) =>
  api.types.some(
    (type) =>
      (type.group ? `${type.group}/${type.version}` : type.version) === object.apiVersion &&
      type.kind === object.kind,
  );
const inNamespace = (object: JsonObject): JsonObject => ({
  ...object,
  metadata: { namespace: NS, ...(object.metadata as JsonObject) },
});

async function helmInstall(sets: string[]): Promise<void> {
  const args = ["template", "svc-gateway", join(repoRoot, "helm", "svc-gateway"), "--namespace", NS];
  for (const value of sets) args.push("--set", value);
  const { stdout } = await run(join(repoRoot, "node_modules", ".bin", "helm"), args, {
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const document of parseAllDocuments(stdout)) {
    const object = document.toJS() as JsonObject | null;
    // Only what the fake models (Deployments, Services, ConfigMaps, Secrets); RBAC and the like need a cluster.
    if (object && known(object)) api.put(inNamespace(object));
  }
}

function conditionReason(kind: Kind, name: string, type: string): string | undefined {
  const conditions = ((api.get(kind, NS, name)?.status as JsonObject | undefined)?.conditions ?? []) as {
    type: string;
    reason?: string;
  }[];
  return conditions.find((condition) => condition.type === type)?.reason;
}

function conditionStatus(kind: Kind, name: string, type: string): string | undefined {
  const conditions = ((api.get(kind, NS, name)?.status as JsonObject | undefined)?.conditions ?? []) as {
    type: string;
    status: string;
  }[];
  return conditions.find((condition) => condition.type === type)?.status;
}

async function runStep(step: KindStep): Promise<void> {
  switch (step.step) {
    case "helm-install":
      return helmInstall(step.sets);
    case "apply-secret":
      api.put({ apiVersion: "v1", kind: "Secret", metadata: { name: step.name, namespace: NS }, data: {} });
      return;
    case "apply":
      for (const resource of readResources(join(repoRoot, step.path))) {
        // A Pod (the traffic generator) needs a kubelet: rolling-restart.test.ts runs its script instead.
        if (known(resource as unknown as JsonObject)) api.put(inNamespace(resource as unknown as JsonObject));
      }
      return;
    case "delete":
      for (const resource of readResources(join(repoRoot, step.path))) {
        api.remove(resource.kind, resource.metadata.namespace ?? NS, resource.metadata.name);
      }
      return;
    case "patch": {
      const kind = kindByResourceName(step.kind);
      const response = await fetch(
        `${api.url}/apis/${GROUP_VERSION}/namespaces/${NS}/${KINDS[kind].plural}/${step.name}`,
        {
          method: "PATCH",
          headers: { "content-type": "application/merge-patch+json" },
          body: JSON.stringify(step.patch),
        },
      );
      expect(response.status, JSON.stringify(step.patch)).toBe(200);
      // Taken in: the operator has reconciled this generation and accepted it.
      const generation = ((await response.json()) as { metadata: { generation: number } }).metadata
        .generation;
      await waitFor(() => {
        const status = api.get(kind, NS, step.name)?.status as { observedGeneration?: number } | undefined;
        expect(status?.observedGeneration).toBe(generation);
        expect(conditionStatus(kind, step.name, "Accepted")).toBe("True");
      });
      return;
    }
    case "wait": {
      const kind = kindByResourceName(step.kind);
      await waitFor(() => {
        const names =
          step.name === "--all"
            ? api.list(kind, NS).map((object) => String((object.metadata as JsonObject).name))
            : [step.name];
        // `kubectl wait --all` with nothing to wait for fails ("no matching resources found").
        expect(names.length, `${step.kind} --all`).toBeGreaterThan(0);
        for (const name of names) {
          expect(conditionStatus(kind, name, step.condition), `${kind}/${name} ${step.condition}`).toBe(
            step.status,
          );
        }
      });
      return;
    }
    case "wait-reason": {
      const kind = kindByResourceName(step.kind);
      await waitFor(() => {
        expect(
          conditionReason(kind, step.name, step.condition),
          `${kind}/${step.name} ${step.condition}`,
        ).toBe(step.reason);
      });
      return;
    }
    case "rollout-restart": {
      // What `kubectl rollout restart` sends: a new pod-template annotation, so the Deployment rolls its pods.
      const response = await fetch(
        `${api.url}/apis/apps/v1/namespaces/${NS}/deployments/${step.deployment}`,
        {
          method: "PATCH",
          headers: { "content-type": "application/merge-patch+json" },
          body: JSON.stringify({
            spec: {
              template: {
                metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": new Date().toISOString() } },
              },
            },
          }),
        },
      );
      expect(response.status).toBe(200);
      return;
    }
    // The traffic during the restart and the old pods' drain: run for real by rolling-restart.test.ts, with the
    // same traffic script against gateway processes.
    case "wait-old-pods-deleted":
    case "traffic-stop":
    case "traffic-succeeded":
      return;
    case "rollout":
      await waitFor(() => {
        const status = api.get("Deployment", NS, step.deployment)?.status as JsonObject | undefined;
        expect(Number(status?.availableReplicas ?? 0), `deployment/${step.deployment}`).toBeGreaterThan(0);
      });
      return;
  }
}

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  // The Deployment controller and kubelet: every Deployment's replicas come up.
  deploymentController = setInterval(() => {
    for (const deployment of api.list("Deployment")) {
      const metadata = deployment.metadata as JsonObject;
      const replicas = Number((deployment.spec as JsonObject | undefined)?.replicas ?? 1);
      const status = (deployment.status ?? {}) as JsonObject;
      if (status.availableReplicas === replicas && status.observedGeneration === metadata.generation)
        continue;
      api.setStatus("Deployment", String(metadata.namespace), String(metadata.name), {
        observedGeneration: metadata.generation ?? 1,
        replicas,
        readyReplicas: replicas,
        availableReplicas: replicas,
        updatedReplicas: replicas,
      });
    }
  }, 50);
  // The operator as the chart runs it: cluster scope, the chart's field manager and leader election.
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
});

afterAll(async () => {
  clearInterval(deploymentController);
  await operator?.stop();
  await api?.close();
});

describe("the kind e2e's steps against the fake API server", () => {
  it("reads every cluster step of run.sh, waits included", () => {
    expect(steps.map((step) => step.step)).toEqual(
      expect.arrayContaining(["helm-install", "apply", "patch", "wait", "delete", "rollout"]),
    );
    // Every custom resource is waited for Ready.
    const readyWaits = steps.filter((step) => step.step === "wait" && step.condition === "Ready");
    for (const kind of ["mcpserver", "identityprovider", "mcpgateway"]) {
      expect(readyWaits, kind).toContainEqual(
        expect.objectContaining({ kind, name: "--all", status: "True" }),
      );
    }
  });

  it("restarts the gateway under traffic: traffic flows before, runs until the old pods are gone, then must succeed", () => {
    const at = (predicate: (step: KindStep) => boolean) => steps.findIndex(predicate);
    const trafficApplied = at((step) => step.step === "apply" && step.path === "e2e/kind/traffic.yaml");
    const restart = at((step) => step.step === "rollout-restart" && step.deployment === "svc-gateway");
    const rolledOut = steps.findIndex(
      (step, index) => index > restart && step.step === "rollout" && step.deployment === "svc-gateway",
    );
    const oldPodsGone = at((step) => step.step === "wait-old-pods-deleted");
    const stop = at((step) => step.step === "traffic-stop" && step.pod === "svc-e2e-traffic");
    const succeeded = at((step) => step.step === "traffic-succeeded" && step.pod === "svc-e2e-traffic");
    expect(trafficApplied).toBeGreaterThan(-1);
    expect([trafficApplied, restart, rolledOut, oldPodsGone, stop, succeeded]).toEqual(
      [trafficApplied, restart, rolledOut, oldPodsGone, stop, succeeded].sort((a, b) => a - b),
    );
    expect(restart).toBeGreaterThan(trafficApplied);
  });

  it("refuses to read a script with a cluster step it does not know", () => {
    expect(() => readKindSteps('kubectl scale -n "$NS" deployment/svc-gateway --replicas=0\n')).toThrow(
      "a kubectl step the local run does not know: kubectl scale",
    );
  });

  it("is the script the kind workflow runs, on the cluster the workflow creates", () => {
    const workflow = parse(readFileSync(join(repoRoot, ".github", "workflows", "e2e-kind.yml"), "utf8")) as {
      jobs: Record<
        string,
        {
          steps: {
            uses?: string;
            run?: string;
            with?: Record<string, string>;
            env?: Record<string, string>;
          }[];
        }
      >;
    };
    const jobSteps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const scripts = (
      JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    const runs = jobSteps.filter((step) => step.run !== undefined);
    const e2e = runs.find((step) => /^npm run (\S+)$/.test(String(step.run)));
    const scriptName = /^npm run (\S+)$/.exec(String(e2e?.run))?.[1] ?? "";
    expect(scripts[scriptName]).toBe(`bash ${relative(repoRoot, kindScriptPath)}`);
    const kind = jobSteps.find((step) => step.uses?.startsWith("helm/kind-action@"));
    expect(e2e?.env?.KIND_CLUSTER).toBe(kind?.with?.cluster_name);
    // The workflow installs with `npm ci` before the script runs, and the script finds helm in node_modules.
    expect(runs.map((step) => step.run)).toContain("npm ci");
    expect(readFileSync(kindScriptPath, "utf8")).toContain("node_modules/.bin/helm");
  });

  it("runs them in order, and every `kubectl wait` comes true", async () => {
    for (const [index, step] of steps.entries()) {
      await expect(runStep(step), `step ${index + 1}: ${JSON.stringify(step)}`).resolves.toBeUndefined();
    }
    // The broken server, deleted by the script's last steps, left events behind for `kubectl describe`.
    const reasons = api
      .list("Event", NS)
      .filter((event) => (event.involvedObject as JsonObject).name === "broken")
      .map((event) => event.reason);
    expect(reasons).toContain("Invalid");
  });
});
