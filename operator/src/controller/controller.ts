import type { Informer, KubernetesObject, ObjectCache } from "@kubernetes/client-node";
import {
  GROUP_VERSION,
  KINDS,
  type Kind,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  OWNER_KIND_LABEL,
  OWNER_NAME_LABEL,
} from "../api/names.ts";
import type { ResourceStatus } from "../api/operator-schemas.ts";
import { describeError, type KubeClient, type WatchedType } from "../kube/kube-client.ts";
import { formatResourceProblem, type ResourceProblem } from "../render/problems.ts";
import { GATEWAY_LABEL, gatewaySettings, renderGateway } from "../render/render-gateway.ts";
import { type Resource, type ResourceRef, refKey } from "../render/resources.ts";
import { derivedServerUrl, renderServerWorkload, serverDeploymentOf } from "../render/server-workload.ts";
import { type BackoffSchedule, WATCH_BACKOFF } from "./backoff.ts";
import { buildStatus, type ConditionInput, sameStatus } from "./conditions.ts";
import { ConfigNudge, configHash } from "./config-nudge.ts";
import { conditionEvents, eventObject } from "./events.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import { startInformer } from "./start-informer.ts";
import { WorkQueue } from "./work-queue.ts";

// The reconcile loop. Informers keep caches of the three kinds and of what the operator owns; every change
// queues the key of the resource to reconcile (`Kind/namespace/name`). Reconciling an McpGateway renders it
// (pure), validates, server-side-applies the ConfigMap and the gateway container's secret env, and records
// per-resource results; reconciling an McpServer applies its Deployment and Service and writes its status
// from those results; an IdentityProvider only gets status. An invalid render applies nothing: the last
// valid ConfigMap keeps serving, and the resources at fault get Accepted=False with the validator's words.

export interface ControllerOptions {
  kube: KubeClient;
  /** Watch one namespace (namespace-scoped install); all namespaces when absent. */
  namespace?: string;
  log: Logger;
  metrics: Metrics;
  backoff?: { baseDelayMs: number; maxDelayMs: number };
  /** How failed watches are restarted (default WATCH_BACKOFF). */
  watchBackoff?: BackoffSchedule;
  /** Re-queue everything this often, in case an event was missed. */
  resyncMs?: number;
}

interface GatewayResult {
  ok: boolean;
  problems: ResourceProblem[];
  /** Selected by the latest render. */
  members: Set<string>;
  /** In the ConfigMap that is applied (the last valid render). */
  applied: Set<string>;
  configMapName: string;
  ref: ResourceRef;
}

type Cache = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

function withType(object: KubernetesObject, apiVersion: string, kind: string): Resource {
  return { ...(object as unknown as Resource), apiVersion, kind };
}

/** The kinds the reconcile loop renders; OrganizationPolicy is read by the control-plane API (control-plane/). */
type ReconciledKind = Exclude<Kind, "OrganizationPolicy">;

const crdType = (kind: Kind): WatchedType => ({
  apiVersion: GROUP_VERSION,
  kind,
  plural: KINDS[kind].plural,
});
const managed = `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`;

export class Controller {
  private readonly options: ControllerOptions;
  private readonly kube: KubeClient;
  private readonly log: Logger;
  private readonly queue: WorkQueue;
  private readonly results = new Map<string, GatewayResult>();
  private readonly fingerprints = new Map<string, string>();
  private readonly configNudge: ConfigNudge;
  private readonly caches: Record<
    ReconciledKind | "ownedDeployments" | "ownedServices" | "ownedConfigMaps" | "gatewayDeployments",
    Cache
  >;
  private readonly countReconcile: (labels: Record<string, string>) => void;
  private readonly timeReconcile: (labels: Record<string, string>, seconds: number) => void;
  private resyncTimer: NodeJS.Timeout | undefined;
  /** Aborted by stop(): ends the retry waits of watches that never connected. */
  private lifetime = new AbortController();
  synced = false;

  constructor(options: ControllerOptions) {
    this.options = options;
    this.kube = options.kube;
    this.log = options.log;
    this.configNudge = new ConfigNudge(this.kube, this.log);
    this.queue = new WorkQueue(
      (key) => this.reconcile(key),
      options.backoff ?? { baseDelayMs: 500, maxDelayMs: 5 * 60_000 },
    );
    const ns = options.namespace;
    this.caches = {
      McpServer: this.kube.informer(crdType("McpServer"), ns),
      IdentityProvider: this.kube.informer(crdType("IdentityProvider"), ns),
      McpGateway: this.kube.informer(crdType("McpGateway"), ns),
      ownedDeployments: this.kube.informer(
        { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", labelSelector: managed },
        ns,
      ),
      ownedServices: this.kube.informer(
        { apiVersion: "v1", kind: "Service", plural: "services", labelSelector: managed },
        ns,
      ),
      ownedConfigMaps: this.kube.informer(
        { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", labelSelector: managed },
        ns,
      ),
      gatewayDeployments: this.kube.informer(
        { apiVersion: "apps/v1", kind: "Deployment", plural: "deployments", labelSelector: GATEWAY_LABEL },
        ns,
      ),
    };
    this.countReconcile = options.metrics.counter(
      "svc_operator_reconcile_total",
      "Reconciles by kind and result",
    );
    this.timeReconcile = options.metrics.histogram(
      "svc_operator_reconcile_duration_seconds",
      "Time one reconcile took, by kind and result",
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    );
    options.metrics.gauge(
      "svc_operator_queue_depth",
      "Keys waiting to be reconciled",
      () => this.queue.depth,
    );
  }

  async start(): Promise<void> {
    if (this.lifetime.signal.aborted) this.lifetime = new AbortController();
    const signal = this.lifetime.signal;
    for (const kind of ["McpServer", "IdentityProvider", "McpGateway"] as const) {
      const cache = this.caches[kind];
      const changed = (object: KubernetesObject) => this.onResourceEvent(kind, object, false);
      cache.on("add", changed);
      cache.on("update", changed);
      cache.on("delete", (object) => this.onResourceEvent(kind, object, true));
    }
    for (const owned of ["ownedDeployments", "ownedServices", "ownedConfigMaps"] as const) {
      const cache = this.caches[owned];
      const toOwner = (object: KubernetesObject) => {
        const labels = object.metadata?.labels ?? {};
        const kind = labels[OWNER_KIND_LABEL];
        const name = labels[OWNER_NAME_LABEL];
        if (kind && name && kind in KINDS) this.queue.add(`${kind}/${object.metadata?.namespace}/${name}`);
      };
      for (const verb of ["add", "update", "delete"] as const) cache.on(verb, toOwner);
    }
    const gatewayDeployment = (object: KubernetesObject) => {
      const gateway = object.metadata?.labels?.[GATEWAY_LABEL];
      if (gateway) this.queue.add(`McpGateway/${object.metadata?.namespace}/${gateway}`);
    };
    for (const verb of ["add", "update", "delete"] as const)
      this.caches.gatewayDeployments.on(verb, gatewayDeployment);

    await Promise.all(Object.entries(this.caches).map(([name, cache]) => this.startInformer(name, cache)));
    if (signal.aborted) return; // stopped before every cache synced
    this.synced = true;
    this.enqueueAll();
    const resyncMs = this.options.resyncMs ?? 5 * 60_000;
    this.resyncTimer = setInterval(() => this.enqueueAll(), resyncMs);
    this.resyncTimer.unref();
  }

  async stop(): Promise<void> {
    this.lifetime.abort();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await this.queue.stop();
    await Promise.all(Object.values(this.caches).map((cache) => cache.stop()));
    this.synced = false;
  }

  /** Resolves once every queued key has been reconciled (tests wait on it). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private startInformer(name: string, cache: Cache): Promise<void> {
    return startInformer(name, cache, {
      log: this.log,
      signal: this.lifetime.signal,
      schedule: this.options.watchBackoff ?? WATCH_BACKOFF,
    });
  }

  private enqueueAll(): void {
    for (const kind of ["McpGateway", "McpServer", "IdentityProvider"] as const) {
      for (const object of this.caches[kind].list())
        this.queue.add(`${kind}/${object.metadata?.namespace}/${object.metadata?.name}`);
    }
  }

  /** Status-only updates (our own writes) change no fingerprint, so they do not wake the loop again. */
  private onResourceEvent(kind: ReconciledKind, object: KubernetesObject, deleted: boolean): void {
    const key = `${kind}/${object.metadata?.namespace}/${object.metadata?.name}`;
    const resource = object as Resource;
    const fingerprint = JSON.stringify([
      resource.metadata.generation,
      resource.metadata.labels,
      resource.spec,
    ]);
    if (deleted) this.fingerprints.delete(key);
    else if (this.fingerprints.get(key) === fingerprint) return;
    else this.fingerprints.set(key, fingerprint);
    this.queue.add(key);
    if (kind !== "McpGateway") {
      for (const gateway of this.caches.McpGateway.list())
        this.queue.add(`McpGateway/${gateway.metadata?.namespace}/${gateway.metadata?.name}`);
    }
  }

  private async reconcile(key: string): Promise<void> {
    const [kind, namespace = "", name = ""] = key.split("/") as [ReconciledKind, string, string];
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      if (kind === "McpGateway") await this.reconcileGateway(namespace, name);
      else await this.reconcileMember(kind, namespace, name);
      this.queue.forget(key);
      this.countReconcile({ kind, result: "success" });
      this.timeReconcile({ kind, result: "success" }, seconds());
    } catch (error) {
      const retryInMs = this.queue.retry(key);
      this.countReconcile({ kind, result: "error" });
      this.timeReconcile({ kind, result: "error" }, seconds());
      this.log.error("reconcile failed", {
        key,
        error: describeError(error),
        retryInMs,
        failures: this.queue.failureCount(key),
      });
    }
  }

  /** Cached objects of a kind, with apiVersion and kind filled in: a real API server leaves them out of the
   *  items of a list, and the render needs them (references, owner references). */
  private resources(kind: ReconciledKind): Resource[] {
    return this.caches[kind].list().map((object) => withType(object, GROUP_VERSION, kind));
  }

  private cached(kind: ReconciledKind, namespace: string, name: string): Resource | undefined {
    const object = this.caches[kind].get(name, namespace);
    return object ? withType(object, GROUP_VERSION, kind) : undefined;
  }

  private memberKeys(refs: ResourceRef[]): Set<string> {
    return new Set(refs.map(refKey));
  }

  private async reconcileGateway(namespace: string, name: string): Promise<void> {
    const key = `McpGateway/${namespace}/${name}`;
    const gateway = this.cached("McpGateway", namespace, name);
    const previous = this.results.get(key);
    if (!gateway) {
      this.results.delete(key);
      for (const member of previous?.members ?? []) this.queue.add(member);
      return;
    }
    const render = renderGateway({
      gateway,
      servers: this.resources("McpServer"),
      identityProviders: this.resources("IdentityProvider"),
    });
    const settings = gatewaySettings(gateway);
    const members = this.memberKeys([...render.servers, ...render.identityProviders]);
    const result: GatewayResult = {
      ok: render.problems.length === 0,
      problems: render.problems,
      members,
      applied: previous?.applied ?? new Set(),
      configMapName: settings.configMapName,
      ref: render.gateway,
    };
    let deployment = this.caches.gatewayDeployments.get(settings.deploymentName, namespace);
    if (result.ok) {
      await this.kube.apply(render.configMap);
      deployment ??= await this.kube.read("apps/v1", "Deployment", namespace, settings.deploymentName);
      // Only patch a Deployment that exists: an apply would otherwise create a half Deployment.
      if (deployment) await this.kube.apply(render.gatewayEnvPatch);
      // The kubelet would refresh the mounted file in a minute or two; a pod annotation makes it seconds.
      await this.configNudge.nudge(deployment, configHash(render.configMap.data as Record<string, string>));
      result.applied = members;
      this.log.info("gateway configuration applied", {
        gateway: key,
        configMap: settings.configMapName,
        servers: render.servers.length,
      });
    } else {
      this.log.warn("gateway configuration invalid; keeping the last valid one", {
        gateway: key,
        problems: render.problems.map(formatResourceProblem),
      });
    }
    this.results.set(key, result);

    const available = Number(
      (deployment as { status?: { availableReplicas?: number } } | undefined)?.status?.availableReplicas ?? 0,
    );
    const ownProblems = render.problems.filter((problem) => refKey(problem.ref) === key);
    const others = render.problems.length - ownProblems.length;
    const conditions: ConditionInput[] = [
      result.ok
        ? {
            type: "Accepted",
            status: true,
            reason: "Accepted",
            message: `${render.servers.length} server(s), ${render.identityProviders.length} identity provider(s)`,
          }
        : {
            type: "Accepted",
            status: false,
            reason: "Invalid",
            message: [
              ...ownProblems.map(formatResourceProblem),
              ...(others > 0 ? [`${others} problem(s) in selected resources (see their status)`] : []),
            ].join("\n"),
          },
      result.ok
        ? {
            type: "Programmed",
            status: true,
            reason: "Programmed",
            message: `ConfigMap ${settings.configMapName} holds generation ${gateway.metadata.generation ?? 0}`,
          }
        : {
            type: "Programmed",
            status: false,
            reason: "Invalid",
            message:
              previous?.applied.size || this.caches.ownedConfigMaps.get(settings.configMapName, namespace)
                ? `the last valid configuration stays in ConfigMap ${settings.configMapName}`
                : "nothing applied yet",
          },
      !deployment
        ? {
            type: "Ready",
            status: false,
            reason: "DeploymentNotFound",
            message: `gateway Deployment ${settings.deploymentName} not found`,
          }
        : available > 0
          ? {
              type: "Ready",
              status: true,
              reason: "Available",
              message: `${available} gateway replica(s) available`,
            }
          : {
              type: "Ready",
              status: false,
              reason: "Unavailable",
              message: `no replica of Deployment ${settings.deploymentName} is available yet`,
            },
    ];
    await this.writeStatus("McpGateway", gateway, conditions, {
      servers: render.servers.length,
      identityProviders: render.identityProviders.length,
      configMap: settings.configMapName,
    });
    for (const member of new Set([...members, ...(previous?.members ?? [])])) this.queue.add(member);
  }

  private async reconcileMember(
    kind: Exclude<ReconciledKind, "McpGateway">,
    namespace: string,
    name: string,
  ): Promise<void> {
    const key = `${kind}/${namespace}/${name}`;
    const resource = this.cached(kind, namespace, name);
    if (!resource) return; // owned objects go with it (owner references)
    let ready: ConditionInput | undefined;
    const extra: ResourceStatus = {};
    if (kind === "McpServer") {
      const workload = renderServerWorkload(resource);
      for (const object of workload) await this.kube.apply(object);
      const owned = [
        { cache: this.caches.ownedDeployments, apiVersion: "apps/v1", kind: "Deployment" },
        { cache: this.caches.ownedServices, apiVersion: "v1", kind: "Service" },
      ];
      for (const { cache, apiVersion, kind: ownedKind } of owned) {
        for (const object of cache.list(namespace)) {
          const labels = object.metadata?.labels ?? {};
          const stale =
            labels[OWNER_KIND_LABEL] === kind && labels[OWNER_NAME_LABEL] === name && workload.length === 0;
          if (stale) await this.kube.delete(apiVersion, ownedKind, namespace, object.metadata?.name ?? "");
        }
      }
      const deployment = serverDeploymentOf(resource);
      const url = deployment
        ? derivedServerUrl(resource, deployment)
        : (resource.spec?.url as string | undefined);
      if (url) extra.url = url;
      if (deployment) {
        const live = this.caches.ownedDeployments.get(name, namespace) as
          | { status?: { availableReplicas?: number } }
          | undefined;
        const available = Number(live?.status?.availableReplicas ?? 0);
        const wanted = deployment.replicas ?? 1;
        if (available === 0 && wanted > 0) {
          ready = {
            type: "Ready",
            status: false,
            reason: "DeploymentUnavailable",
            message: `0 of ${wanted} replica(s) available`,
          };
        }
      }
    }

    const selectedBy = [...this.results.values()].filter((result) => result.members.has(key));
    const appliedBy = [...this.results.values()].filter((result) => result.applied.has(key));
    const ownProblems = selectedBy.flatMap((result) =>
      result.problems.filter((problem) => refKey(problem.ref) === key),
    );
    const gateways = (results: GatewayResult[]) =>
      results.map((result) => `McpGateway ${result.ref.namespace}/${result.ref.name}`).join(", ");
    const blocked = selectedBy.filter((result) => !result.ok);
    const accepted: ConditionInput =
      selectedBy.length === 0
        ? {
            type: "Accepted",
            status: false,
            reason: "NotSelected",
            message: `no McpGateway selects this ${kind}`,
          }
        : ownProblems.length > 0
          ? {
              type: "Accepted",
              status: false,
              reason: "Invalid",
              message: [...new Set(ownProblems.map(formatResourceProblem))].join("\n"),
            }
          : {
              type: "Accepted",
              status: true,
              reason: "Accepted",
              message: `selected by ${gateways(selectedBy)}`,
            };
    const upToDate = appliedBy.filter((result) => result.ok);
    const programmed: ConditionInput =
      ownProblems.length === 0 && upToDate.length > 0 && blocked.length === 0
        ? {
            type: "Programmed",
            status: true,
            reason: "Programmed",
            message: `in the configuration of ${gateways(upToDate)}`,
          }
        : ownProblems.length > 0
          ? {
              type: "Programmed",
              status: false,
              reason: "Invalid",
              message: "not applied until the problems above are fixed",
            }
          : blocked.length > 0
            ? {
                type: "Programmed",
                status: false,
                reason: "GatewayInvalid",
                message: `${gateways(blocked)} has invalid resources (see its status); its last valid configuration stays`,
              }
            : {
                type: "Programmed",
                status: false,
                reason: "NotSelected",
                message: `no McpGateway selects this ${kind}`,
              };
    ready ??=
      appliedBy.length > 0
        ? { type: "Ready", status: true, reason: "Ready", message: `served by ${gateways(appliedBy)}` }
        : {
            type: "Ready",
            status: false,
            reason: programmed.reason,
            message: "not in any applied gateway configuration",
          };
    await this.writeStatus(kind, resource, [accepted, programmed, ready], extra);
  }

  private async writeStatus(
    kind: Kind,
    resource: Resource,
    conditions: ConditionInput[],
    extra: ResourceStatus,
  ): Promise<void> {
    const previous = resource.status as ResourceStatus | undefined;
    const status = buildStatus(previous, resource.metadata.generation, conditions, extra);
    if (sameStatus(previous, status)) return;
    await this.kube.patchStatus(
      kind,
      resource.metadata.namespace ?? "default",
      resource.metadata.name,
      status as Record<string, unknown>,
    );
    // Events only after the status they describe is written; one lost event must not fail the reconcile.
    for (const event of conditionEvents(previous, status)) {
      await this.kube.create(eventObject(kind, resource, event, new Date())).catch((error: unknown) => {
        this.log.warn("event not recorded", {
          resource: `${kind}/${resource.metadata.namespace}/${resource.metadata.name}`,
          reason: event.reason,
          error: describeError(error),
        });
      });
    }
  }
}
