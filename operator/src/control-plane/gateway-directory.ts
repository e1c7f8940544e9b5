import type { Informer, KubernetesObject, ObjectCache } from "@kubernetes/client-node";
import { GROUP_VERSION, KINDS, MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "../api/names.ts";
import type { ControlPlaneClient } from "../api/operator-schemas.ts";
import { WATCH_BACKOFF } from "../controller/backoff.ts";
import { eventObject } from "../controller/events.ts";
import type { Logger } from "../controller/log.ts";
import { startInformer } from "../controller/start-informer.ts";
import { describeError, type KubeClient } from "../kube/kube-client.ts";
import { gatewaySettings } from "../render/render-gateway.ts";
import type { Resource } from "../render/resources.ts";
import {
  buildPolicyDocument,
  etagOf,
  type Lookup,
  organizationIdOf,
  type ServedDocument,
} from "./policy-document.ts";
import { writePolicyStatus } from "./policy-status.ts";

export type { Lookup, ServedDocument } from "./policy-document.ts";

// What the control-plane API serves, read from the cluster through informers: the McpGateways that have a
// controlPlaneClient (who may call, by gateway id), their OrganizationPolicies (the policy document) and the
// ConfigMaps the controller renders (the whole configuration, for centralized mode). Every document is validated with
// the gateway's own schema before it is served; an OrganizationPolicy that does not validate is logged and the last
// good document of that organization keeps being served. Waiters (long polls) are woken on every change.
//
// A gateway id belongs to the McpGateway that claimed it first (the oldest creationTimestamp; uid breaks a tie). An
// McpGateway claiming an id already held, in any watched namespace, does not take it away: the holder goes on being
// served, the newcomer's requests are checked against the holder's key (and so refused), and the newcomer gets a
// Warning event (DuplicateGatewayId) naming the holder. Otherwise anyone allowed to create an McpGateway in one
// namespace could lock another namespace's gateway out by copying its id.

type Cache = Informer<KubernetesObject> & ObjectCache<KubernetesObject>;

export interface RegisteredGateway {
  namespace: string;
  name: string;
  client: ControlPlaneClient;
}

export class GatewayDirectory {
  readonly #log: Logger;
  readonly #writeStatus: (object: KubernetesObject) => void;
  readonly #caches: { gateways: Cache; policies: Cache; configMaps: Cache };
  readonly #lastGoodPolicy = new Map<string, ServedDocument>();
  readonly #reportedInvalid = new Set<string>();
  #waiters: (() => void)[] = [];
  #byId = new Map<string, RegisteredGateway>();
  readonly #kube: KubeClient;
  readonly #isLeader: () => boolean;
  /** Duplicate claims already reported (by newcomer uid and id), so a claim gets one event, not one per change. */
  readonly #reportedDuplicates = new Set<string>();
  /** The McpGateways' uids and generations when the id index was built: a change of status alone keeps it. */
  #gatewaySpecs = "";
  /** Built documents by OrganizationPolicy uid, for the resourceVersion they were built from. */
  readonly #built = new Map<
    string,
    { resourceVersion: string | undefined; result: Lookup<ServedDocument> }
  >();

  constructor(kube: KubeClient, log: Logger, isLeader: () => boolean, namespace?: string) {
    this.#log = log;
    this.#kube = kube;
    this.#isLeader = isLeader;
    this.#writeStatus = (object) => writePolicyStatus(object, { kube, log, isLeader });
    const crd = (kind: "McpGateway" | "OrganizationPolicy") => ({
      apiVersion: GROUP_VERSION,
      kind,
      plural: KINDS[kind].plural,
    });
    this.#caches = {
      gateways: kube.informer(crd("McpGateway"), namespace),
      policies: kube.informer(crd("OrganizationPolicy"), namespace),
      configMaps: kube.informer(
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          plural: "configmaps",
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE}`,
        },
        namespace,
      ),
    };
    for (const verb of ["add", "update", "delete"] as const) {
      // A heartbeat writes the McpGateway's status: that changes nothing served, so it wakes no long poll.
      this.#caches.gateways.on(verb, () => this.#changed(false));
      this.#caches.policies.on(verb, () => this.#changed(true));
      if (verb !== "delete") this.#caches.policies.on(verb, (object) => this.#writeStatus(object));
      this.#caches.configMaps.on(verb, () => this.#changed(true));
    }
  }

  async start(signal: AbortSignal): Promise<void> {
    await Promise.all(
      Object.entries(this.#caches).map(([name, cache]) =>
        startInformer(`control-plane ${name}`, cache, { log: this.#log, signal, schedule: WATCH_BACKOFF }),
      ),
    );
    this.#changed(true);
  }

  async stop(): Promise<void> {
    await Promise.all(Object.values(this.#caches).map((cache) => cache.stop()));
    for (const wake of this.#waiters.splice(0)) wake();
  }

  get registered(): number {
    return this.#byId.size;
  }

  /** On becoming the leader: the OrganizationPolicies' Accepted conditions, which only the leader writes. */
  writePolicyStatuses(): void {
    for (const policy of this.#caches.policies.list()) this.#writeStatus(policy);
  }

  /** Long polls waiting for a change now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves on the next change of anything served, after `ms`, or at stop, whichever comes first. */
  waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.push(done);
    });
  }

  find(gatewayId: string): Lookup<RegisteredGateway> {
    const found = this.#byId.get(gatewayId.toLowerCase());
    if (found === undefined) return { ok: false, problem: "unknown gateway id" };
    return { ok: true, value: found };
  }

  /** The organization id of a gateway: its OrganizationPolicy's spec.organizationId, else that resource's name. */
  organizationOf(gateway: RegisteredGateway): Lookup<string> {
    const policy = this.#policyResource(gateway);
    if (policy === undefined) return { ok: false, problem: this.#missingPolicy(gateway) };
    return { ok: true, value: organizationIdOf(policy) };
  }

  policyFor(gateway: RegisteredGateway): Lookup<ServedDocument> {
    const policy = this.#policyResource(gateway);
    if (policy === undefined) return { ok: false, problem: this.#missingPolicy(gateway) };
    const key = `${gateway.namespace}/${policy.metadata.name}`;
    const built = this.#buildOnce(policy);
    if (built.ok) {
      this.#lastGoodPolicy.set(key, built.value);
      return built;
    }
    const version = `${key}@${policy.metadata.resourceVersion}`;
    if (!this.#reportedInvalid.has(version)) {
      if (this.#reportedInvalid.size > 1000) this.#reportedInvalid.clear();
      this.#reportedInvalid.add(version);
      this.#log.error("OrganizationPolicy is invalid; its last good document keeps being served", {
        organizationPolicy: key,
        problem: built.problem,
      });
    }
    const lastGood = this.#lastGoodPolicy.get(key);
    return lastGood === undefined ? built : { ok: true, value: lastGood };
  }

  /** Centralized mode: the gateway YAML the controller rendered into the McpGateway's ConfigMap. */
  configurationFor(gateway: RegisteredGateway): Lookup<ServedDocument> {
    const resource = this.#caches.gateways.get(gateway.name, gateway.namespace) as Resource | undefined;
    const organization = this.organizationOf(gateway);
    if (resource === undefined || !organization.ok)
      return { ok: false, problem: organization.ok ? "McpGateway gone" : organization.problem };
    const { configMapName, configKey } = gatewaySettings(resource);
    const configMap = this.#caches.configMaps.get(configMapName, gateway.namespace) as
      | { data?: Record<string, string> }
      | undefined;
    const yaml = configMap?.data?.[configKey];
    if (yaml === undefined) {
      return {
        ok: false,
        problem: `ConfigMap ${gateway.namespace}/${configMapName} (key ${configKey}) is not rendered yet; see the McpGateway's Accepted condition`,
      };
    }
    const body = { organization_id: organization.value, yaml };
    return { ok: true, value: { etag: etagOf(body), body } };
  }

  /** Each version of a policy is converted and validated once, however many gateways ask and however often. */
  #buildOnce(policy: Resource): Lookup<ServedDocument> {
    const uid = policy.metadata.uid ?? `${policy.metadata.namespace}/${policy.metadata.name}`;
    const cached = this.#built.get(uid);
    if (cached !== undefined && cached.resourceVersion === policy.metadata.resourceVersion)
      return cached.result;
    const result = buildPolicyDocument(policy);
    if (this.#built.size >= 10_000) this.#built.clear();
    this.#built.set(uid, { resourceVersion: policy.metadata.resourceVersion, result });
    return result;
  }

  #policyResource(gateway: RegisteredGateway): Resource | undefined {
    return this.#caches.policies.get(gateway.client.organizationPolicy, gateway.namespace) as
      | Resource
      | undefined;
  }

  #missingPolicy(gateway: RegisteredGateway): string {
    return `OrganizationPolicy ${gateway.namespace}/${gateway.client.organizationPolicy} does not exist`;
  }

  /** One Warning event on the newcomer, written by the leader. */
  #reportDuplicate(newcomer: Resource, holder: RegisteredGateway): void {
    const claim = claimOf(newcomer) as ControlPlaneClient;
    const key = `${newcomer.metadata.uid ?? `${newcomer.metadata.namespace}/${newcomer.metadata.name}`}\u0000${claim.gatewayId}`;
    if (this.#reportedDuplicates.has(key) || !this.#isLeader()) return;
    if (this.#reportedDuplicates.size > 10_000) this.#reportedDuplicates.clear();
    this.#reportedDuplicates.add(key);
    const message = `spec.controlPlaneClient.gatewayId ${claim.gatewayId} is already held by McpGateway ${holder.namespace}/${holder.name}, which keeps it: this gateway's control-plane requests are refused; give it an id of its own`;
    this.#log.warn("McpGateway claims a gateway id another McpGateway holds; refused", {
      gateway: `${newcomer.metadata.namespace}/${newcomer.metadata.name}`,
      holder: `${holder.namespace}/${holder.name}`,
    });
    this.#kube
      .create(
        eventObject(
          "McpGateway",
          newcomer,
          { type: "Warning", reason: "DuplicateGatewayId", message },
          new Date(),
        ),
      )
      .catch((error: unknown) =>
        this.#log.warn("DuplicateGatewayId event not written", { error: describeError(error) }),
      );
  }

  #changed(documentsMayHaveChanged: boolean): void {
    const specs = JSON.stringify(
      this.#caches.gateways.list().map((object) => [object.metadata?.uid, object.metadata?.generation]),
    );
    if (!documentsMayHaveChanged && specs === this.#gatewaySpecs) return;
    this.#gatewaySpecs = specs;
    const claims = this.#caches.gateways
      .list()
      .map((object) => object as Resource)
      .filter((resource) => claimOf(resource) !== undefined)
      .sort(firstCreated);
    const byId = new Map<string, RegisteredGateway>();
    for (const resource of claims) {
      const client = claimOf(resource) as ControlPlaneClient;
      const id = client.gatewayId.toLowerCase();
      const holder = byId.get(id);
      if (holder !== undefined) {
        this.#reportDuplicate(resource, holder);
        continue;
      }
      byId.set(id, {
        namespace: resource.metadata.namespace ?? "default",
        name: resource.metadata.name,
        client,
      });
    }
    this.#byId = byId;
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

function claimOf(resource: Resource): ControlPlaneClient | undefined {
  return (resource.spec as { controlPlaneClient?: ControlPlaneClient } | undefined)?.controlPlaneClient;
}

/** Oldest first: creationTimestamp (set by the API server, not by whoever writes the resource), then uid. */
function firstCreated(a: Resource, b: Resource): number {
  const created = (resource: Resource) =>
    Date.parse((resource.metadata as { creationTimestamp?: string }).creationTimestamp ?? "") ||
    Number.MAX_SAFE_INTEGER;
  return created(a) - created(b) || (a.metadata.uid ?? "").localeCompare(b.metadata.uid ?? "");
}
