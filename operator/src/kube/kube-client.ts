import {
  ApiException,
  CoordinationV1Api,
  CustomObjectsApi,
  type Informer,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  makeInformer,
  type ObjectCache,
  PatchStrategy,
  setHeaderOptions,
  type V1Lease,
} from "@kubernetes/client-node";
import { API_GROUP, API_VERSION, FIELD_MANAGER, KINDS, type Kind } from "../api/names.ts";
import type { KubeObject } from "../render/resources.ts";

// The operator's only door to the API server, through @kubernetes/client-node: server-side apply with our
// field manager, reads and deletes, status as a JSON merge patch on the status subresource, leases, and
// informers (list + watch).

export interface KubeClientOptions {
  /** API server URL (tests, `--server`); otherwise in-cluster config or ~/.kube/config. */
  server?: string;
  token?: string;
}

export function loadKubeConfig(options: KubeClientOptions = {}): KubeConfig {
  const config = new KubeConfig();
  if (options.server) {
    config.loadFromOptions({
      // client-node refuses plain http unless TLS checks are off: only loopback development servers use it.
      clusters: [
        { name: "target", server: options.server, skipTLSVerify: options.server.startsWith("http://") },
      ],
      users: [{ name: "operator", ...(options.token ? { token: options.token } : {}) }],
      contexts: [{ name: "target", cluster: "target", user: "operator" }],
      currentContext: "target",
    });
  } else {
    config.loadFromDefault();
  }
  return config;
}

export function isNotFound(error: unknown): boolean {
  return error instanceof ApiException && error.code === 404;
}

export function isConflict(error: unknown): boolean {
  return error instanceof ApiException && error.code === 409;
}

/** A short text for logs and conditions; never the whole response (it may echo the object). */
export function describeError(error: unknown): string {
  if (error instanceof ApiException) {
    const body = error.body as { message?: unknown } | string | undefined;
    const message =
      typeof body === "object" && body !== null && typeof body.message === "string"
        ? body.message
        : String(error.message);
    return `HTTP ${error.code}: ${message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

export interface WatchedType {
  apiVersion: string;
  kind: string;
  /** Path segment of the collection, e.g. "deployments". */
  plural: string;
  labelSelector?: string;
}

export class KubeClient {
  readonly config: KubeConfig;
  private readonly objects: KubernetesObjectApi;
  private readonly customObjects: CustomObjectsApi;
  private readonly coordination: CoordinationV1Api;

  constructor(config: KubeConfig) {
    this.config = config;
    this.objects = KubernetesObjectApi.makeApiClient(config);
    this.customObjects = config.makeApiClient(CustomObjectsApi);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  /** Server-side apply: the API server merges our fields and removes the ones we stopped setting. `force`
   *  takes over fields another manager set (the operator is the authority on what it renders). */
  async apply(object: KubeObject): Promise<KubernetesObject> {
    return this.objects.patch(
      object as KubernetesObject,
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  async read(
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
  ): Promise<KubernetesObject | undefined> {
    try {
      return await this.objects.read({ apiVersion, kind, metadata: { name, namespace } });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(apiVersion: string, kind: string, namespace: string, name: string): Promise<void> {
    try {
      await this.objects.delete({ apiVersion, kind, metadata: { name, namespace } });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Creates an object once (an Event: each is new, never applied over). */
  async create(object: KubeObject): Promise<void> {
    await this.objects.create(object as KubernetesObject);
  }

  /** Names of the pods in `namespace` whose labels include every one of `matchLabels`. */
  async listPodNames(namespace: string, matchLabels: Record<string, string>): Promise<string[]> {
    const labelSelector = Object.entries(matchLabels)
      .map(([key, value]) => `${key}=${value}`)
      .join(",");
    const list = await this.objects.list(
      "v1",
      "Pod",
      namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      labelSelector,
    );
    return list.items.map((pod) => String(pod.metadata?.name));
  }

  /** Sets annotations on a pod (JSON merge patch of its metadata; other annotations stay). */
  async annotatePod(namespace: string, name: string, annotations: Record<string, string>): Promise<void> {
    await this.objects.patch(
      { apiVersion: "v1", kind: "Pod", metadata: { name, namespace, annotations } },
      undefined,
      undefined,
      FIELD_MANAGER,
      undefined,
      PatchStrategy.MergePatch,
    );
  }

  /** Replaces status wholesale (merge patch of `{ status }`; lists in a merge patch replace). */
  async patchStatus(
    kind: Kind,
    namespace: string,
    name: string,
    status: Record<string, unknown>,
  ): Promise<void> {
    await this.customObjects.patchNamespacedCustomObjectStatus(
      {
        group: API_GROUP,
        version: API_VERSION,
        namespace,
        plural: KINDS[kind].plural,
        name,
        body: { status },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
  }

  async readLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ namespace, name });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  createLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({ namespace, body: lease });
  }

  /** Fails with 409 when the lease changed since `lease.metadata.resourceVersion` (optimistic locking). */
  replaceLease(namespace: string, name: string, lease: V1Lease): Promise<V1Lease> {
    return this.coordination.replaceNamespacedLease({ namespace, name, body: lease });
  }

  informer(
    type: WatchedType,
    namespace?: string,
  ): Informer<KubernetesObject> & ObjectCache<KubernetesObject> {
    const base = type.apiVersion.includes("/") ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
    const path = namespace ? `${base}/namespaces/${namespace}/${type.plural}` : `${base}/${type.plural}`;
    const list = () =>
      this.objects.list(
        type.apiVersion,
        type.kind,
        namespace,
        undefined,
        undefined,
        undefined,
        undefined,
        type.labelSelector,
      );
    return makeInformer(this.config, path, list, type.labelSelector);
  }
}
