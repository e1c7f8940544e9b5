// An in-process fake of the Kubernetes API server for tests: the real @kubernetes/client-node talks to it
// over HTTP on 127.0.0.1. It speaks the real wire format for what the operator uses — discovery, list,
// watch (JSON lines from a resourceVersion), create, get, replace with optimistic concurrency (409),
// delete with owner-reference garbage collection, JSON merge patch, server-side apply
// (application/apply-patch+yaml with a required fieldManager, field ownership per manager and 409 conflicts
// unless `force`), the status subresource, defaulting from a CRD's structural schema, watch bookmarks and
// 410 Gone for a watch from a compacted resourceVersion — and rejects anything else loudly so a wrong request
// shows up as a failing test, not as silent success. Each of these behaviours is tested in
// operator/test/fake-kube-api.test.ts against the Kubernetes API documentation section it follows.
// Not modelled: field ownership through update (PUT, merge patch: only apply records managers),
// finalizers, admission, controllers (tests set Deployment status themselves through `setStatus`).
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse as parseYaml } from "yaml";
import type { JsonSchema } from "../api/json-schema.ts";
import {
  appliedFields,
  isObject,
  type Json,
  type JsonObject,
  jsonMergePatch,
  serverSideApply,
  withoutFields,
} from "./merge.ts";
import { applyStructuralDefaults } from "./structural-defaults.ts";

export interface FakeResourceType {
  group: string; // "" for the core group
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
  /** Objects of this type have a status subresource (spec writes keep status, status writes keep spec). */
  statusSubresource: boolean;
  /** Returns problems (empty when valid), like a CRD's OpenAPI schema in a real API server. */
  validate?: (object: JsonObject) => string[];
  /** A CRD's structural schema: its `default`s are applied on every create and update. */
  schema?: JsonSchema;
}

export const builtinResourceTypes: FakeResourceType[] = [
  {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    namespaced: true,
    statusSubresource: false,
  },
  { group: "", version: "v1", kind: "Secret", plural: "secrets", namespaced: true, statusSubresource: false },
  { group: "", version: "v1", kind: "Event", plural: "events", namespaced: true, statusSubresource: false },
  {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    statusSubresource: true,
  },
  { group: "", version: "v1", kind: "Pod", plural: "pods", namespaced: true, statusSubresource: true },
  {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
    statusSubresource: true,
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    kind: "Lease",
    plural: "leases",
    namespaced: true,
    statusSubresource: false,
  },
];

interface StoredObject {
  object: JsonObject;
  /** Last applied configuration per field manager (main resource and status separately). */
  applied: Map<string, JsonObject>;
}

interface WatchEvent {
  resourceVersion: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  resource: FakeResourceType;
  object: JsonObject;
}

interface Watcher {
  resource: FakeResourceType;
  namespace: string | undefined;
  selector: LabelSelector;
  response: ServerResponse;
  /** The client sent allowWatchBookmarks=true. */
  bookmarks: boolean;
  /** Path and query, as the client asked. */
  request: string;
}

type LabelSelector = (labels: Record<string, string>) => boolean;

class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  constructor(code: number, reason: string, message: string) {
    super(message);
    this.code = code;
    this.reason = reason;
  }
}

function parseLabelSelector(text: string | null): LabelSelector {
  if (!text) return () => true;
  const terms = text.split(",").map((term) => term.trim());
  return (labels) =>
    terms.every((term) => {
      const notEqual = term.split("!=");
      if (notEqual.length === 2) return labels[notEqual[0] as string] !== notEqual[1];
      const equal = term.split(/==?/);
      if (equal.length === 2) return labels[equal[0] as string] === equal[1];
      if (term.startsWith("!")) return !(term.slice(1) in labels);
      return term in labels;
    });
}

function metadataOf(object: JsonObject): JsonObject {
  if (!isObject(object.metadata)) object.metadata = {};
  return object.metadata as JsonObject;
}

function labelsOf(object: JsonObject): Record<string, string> {
  const labels = metadataOf(object).labels;
  return isObject(labels) ? (labels as Record<string, string>) : {};
}

/** JSON with sorted keys, so equal objects compare equal whatever order their keys were written in. */
function canonical(value: Json | undefined): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function withoutStatusAndMetadata(object: JsonObject): string {
  const { metadata: _m, status: _s, ...rest } = object;
  return canonical(rest);
}

export class FakeKubeApi {
  readonly types: FakeResourceType[];
  /** Every request the fake served, for tests that assert on the wire (method, path, content type). */
  readonly requests: { method: string; path: string; contentType: string | undefined }[] = [];
  private readonly store = new Map<string, StoredObject>();
  private readonly history: WatchEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private resourceVersion = 1;
  /** How many watches were answered 410 Gone. */
  expiredWatches = 0;
  /** Watches from a resourceVersion older than this are answered 410 Gone (etcd compacted that history). */
  private compactedThrough = 0;
  private server: Server | undefined;
  url = "";

  constructor(extraTypes: FakeResourceType[] = []) {
    this.types = [...builtinResourceTypes, ...extraTypes];
  }

  async start(): Promise<string> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        this.sendError(
          response,
          error instanceof ApiError ? error : new ApiError(500, "InternalError", String(error)),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    for (const watcher of this.watchers) watcher.response.end();
    this.watchers.clear();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The path and query of every open watch (tests wait for theirs before changing objects). */
  openWatches(): string[] {
    return [...this.watchers].map((watcher) => watcher.request);
  }

  /** Ends every open watch, as an API server restart or a load balancer timeout would. */
  dropWatches(): void {
    for (const watcher of this.watchers) watcher.response.end();
    this.watchers.clear();
  }

  /** Forgets the change history up to now, as etcd compaction does: a watch from an older resourceVersion
   *  gets 410 Gone and its client has to list again. */
  compact(): void {
    this.compactedThrough = this.resourceVersion;
    this.history.length = 0;
  }

  /** Sends a BOOKMARK (the current resourceVersion, no object) to every watch that allows bookmarks, as
   *  the API server does from time to time so a client can resume from a recent resourceVersion. */
  bookmark(): void {
    for (const watcher of this.watchers) {
      if (!watcher.bookmarks) continue;
      const type = watcher.resource;
      watcher.response.write(
        `${JSON.stringify({
          type: "BOOKMARK",
          object: {
            apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
            kind: type.kind,
            metadata: { resourceVersion: String(this.resourceVersion) },
          },
        })}\n`,
      );
    }
  }

  // ---- direct access for test setup and assertions -------------------------------------------------

  get(kind: string, namespace: string | undefined, name: string): JsonObject | undefined {
    const type = this.typeByKind(kind);
    return this.store.get(this.key(type, namespace, name))?.object;
  }

  list(kind: string, namespace?: string): JsonObject[] {
    const type = this.typeByKind(kind);
    return this.listStored(type, namespace).map((stored) => stored.object);
  }

  /** Creates or replaces an object as a user's `kubectl apply` would (bumps generation on spec changes). */
  put(object: JsonObject): JsonObject {
    const type = this.typeByApiVersionKind(String(object.apiVersion), String(object.kind));
    const metadata = metadataOf(object);
    const key = this.key(type, metadata.namespace as string | undefined, String(metadata.name));
    const existing = this.store.get(key);
    return existing ? this.update(type, key, object, "spec") : this.create(type, object);
  }

  setStatus(kind: string, namespace: string | undefined, name: string, status: JsonObject): JsonObject {
    const type = this.typeByKind(kind);
    const key = this.key(type, namespace, name);
    const existing = this.store.get(key);
    if (!existing) throw new Error(`${kind} ${namespace}/${name} does not exist`);
    return this.update(type, key, { ...existing.object, status }, "status");
  }

  remove(kind: string, namespace: string | undefined, name: string): void {
    const type = this.typeByKind(kind);
    this.delete(type, this.key(type, namespace, name));
  }

  // ---- storage --------------------------------------------------------------------------------------

  private typeByKind(kind: string): FakeResourceType {
    const type = this.types.find((t) => t.kind === kind);
    if (!type) throw new Error(`the fake API server does not know kind ${kind}`);
    return type;
  }

  private typeByApiVersionKind(apiVersion: string, kind: string): FakeResourceType {
    const type = this.types.find(
      (t) => (t.group ? `${t.group}/${t.version}` : t.version) === apiVersion && t.kind === kind,
    );
    if (!type) throw new ApiError(404, "NotFound", `no resource ${apiVersion} ${kind}`);
    return type;
  }

  private key(type: FakeResourceType, namespace: string | undefined, name: string): string {
    return `${type.group}/${type.plural}/${type.namespaced ? (namespace ?? "") : ""}/${name}`;
  }

  private listStored(type: FakeResourceType, namespace: string | undefined): StoredObject[] {
    const prefix = `${type.group}/${type.plural}/${namespace ?? ""}`;
    return [...this.store.entries()]
      .filter(([key]) =>
        namespace === undefined
          ? key.startsWith(`${type.group}/${type.plural}/`)
          : key.startsWith(`${prefix}/`),
      )
      .map(([, stored]) => stored);
  }

  private nextResourceVersion(): string {
    this.resourceVersion += 1;
    return String(this.resourceVersion);
  }

  private checkValid(type: FakeResourceType, object: JsonObject): void {
    const problems = type.validate?.(object) ?? [];
    if (problems.length > 0) {
      const name = String(metadataOf(object).name);
      throw new ApiError(
        422,
        "Invalid",
        `${type.kind}.${type.group} "${name}" is invalid: ${problems.join(", ")}`,
      );
    }
  }

  /** A copy of what a client sent, with the defaults of its type's schema applied. */
  private defaulted(type: FakeResourceType, input: JsonObject): JsonObject {
    const object = structuredClone(input);
    return type.schema ? applyStructuralDefaults(type.schema, object) : object;
  }

  private create(type: FakeResourceType, input: JsonObject, applied?: [string, JsonObject]): JsonObject {
    const object = this.defaulted(type, input);
    const metadata = metadataOf(object);
    if (typeof metadata.name !== "string" || metadata.name === "") {
      throw new ApiError(422, "Invalid", `${type.kind}: metadata.name: Required value`);
    }
    if (type.namespaced && typeof metadata.namespace !== "string") {
      throw new ApiError(422, "Invalid", `${type.kind} ${metadata.name}: metadata.namespace: Required value`);
    }
    const key = this.key(type, metadata.namespace as string | undefined, metadata.name);
    if (this.store.has(key)) {
      throw new ApiError(409, "AlreadyExists", `${type.plural} "${metadata.name}" already exists`);
    }
    object.apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    object.kind = type.kind;
    metadata.uid = randomUUID();
    metadata.generation = 1;
    metadata.creationTimestamp = new Date().toISOString();
    metadata.resourceVersion = this.nextResourceVersion();
    this.checkValid(type, object);
    this.store.set(key, { object, applied: new Map(applied ? [applied] : []) });
    this.emit("ADDED", type, object);
    return object;
  }

  /** Writes `input` over the stored object; `part` says whether spec or status is being written. */
  private update(
    type: FakeResourceType,
    key: string,
    input: JsonObject,
    part: "spec" | "status",
  ): JsonObject {
    const stored = this.store.get(key);
    if (!stored) throw new ApiError(404, "NotFound", `not found: ${key}`);
    const before = stored.object;
    const object = this.defaulted(type, input);
    const metadata = metadataOf(object);
    const beforeMetadata = metadataOf(before);
    if (type.statusSubresource) {
      if (part === "spec") {
        if (before.status === undefined) delete object.status;
        else object.status = before.status;
      } else {
        const status = object.status;
        Object.assign(object, structuredClone(before));
        if (status === undefined) delete object.status;
        else object.status = status;
      }
    }
    const specChanged = withoutStatusAndMetadata(object) !== withoutStatusAndMetadata(before);
    const metadataOut = part === "status" ? metadataOf(object) : metadata;
    for (const field of ["uid", "creationTimestamp", "name", "namespace"])
      metadataOut[field] = beforeMetadata[field] ?? null;
    if (beforeMetadata.namespace === undefined) delete metadataOut.namespace;
    metadataOut.generation = Number(beforeMetadata.generation) + (specChanged && part === "spec" ? 1 : 0);
    object.apiVersion = before.apiVersion ?? null;
    object.kind = before.kind ?? null;
    metadataOut.resourceVersion = beforeMetadata.resourceVersion ?? null;
    if (canonical(object) === canonical(before)) return before; // a no-op write keeps the resourceVersion
    metadataOut.resourceVersion = this.nextResourceVersion();
    this.checkValid(type, object);
    stored.object = object;
    this.emit("MODIFIED", type, object);
    return object;
  }

  private delete(type: FakeResourceType, key: string): JsonObject {
    const stored = this.store.get(key);
    if (!stored) throw new ApiError(404, "NotFound", `not found: ${key}`);
    this.store.delete(key);
    metadataOf(stored.object).resourceVersion = this.nextResourceVersion();
    this.emit("DELETED", type, stored.object);
    this.collectGarbage(String(metadataOf(stored.object).uid));
    return stored.object;
  }

  /** Background cascading deletion: dependents whose owner reference points at a deleted uid go too. */
  private collectGarbage(ownerUid: string): void {
    for (const [key, stored] of [...this.store.entries()]) {
      const owners = metadataOf(stored.object).ownerReferences;
      if (Array.isArray(owners) && owners.some((owner) => isObject(owner) && owner.uid === ownerUid)) {
        const type = this.types.find((t) => key.startsWith(`${t.group}/${t.plural}/`));
        if (type && this.store.has(key)) this.delete(type, key);
      }
    }
  }

  private emit(type: WatchEvent["type"], resource: FakeResourceType, object: JsonObject): void {
    const event: WatchEvent = {
      resourceVersion: Number(metadataOf(object).resourceVersion),
      type,
      resource,
      object: structuredClone(object),
    };
    this.history.push(event);
    for (const watcher of this.watchers) this.send(watcher, event);
  }

  private send(watcher: Watcher, event: WatchEvent): void {
    if (event.resource !== watcher.resource) return;
    const metadata = metadataOf(event.object);
    if (watcher.namespace !== undefined && metadata.namespace !== watcher.namespace) return;
    if (!watcher.selector(labelsOf(event.object))) return;
    watcher.response.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
  }

  // ---- HTTP -----------------------------------------------------------------------------------------

  private sendJson(response: ServerResponse, code: number, body: Json): void {
    response.writeHead(code, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  }

  private sendError(response: ServerResponse, error: ApiError): void {
    if (response.headersSent) {
      response.end();
      return;
    }
    this.sendJson(response, error.code, {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: error.message,
      reason: error.reason,
      code: error.code,
    });
  }

  private async readBody(request: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  private discovery(path: string): Json | undefined {
    if (path === "/api") return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [] };
    if (path === "/apis") {
      const groups = [...new Set(this.types.filter((t) => t.group).map((t) => `${t.group}/${t.version}`))];
      return {
        kind: "APIGroupList",
        apiVersion: "v1",
        groups: groups.map((groupVersion) => {
          const [name, version] = groupVersion.split("/");
          const preferred = { groupVersion, version: version ?? "" };
          return { name: name ?? "", versions: [preferred], preferredVersion: preferred };
        }),
      };
    }
    const match = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))$/.exec(path);
    if (!match) return undefined;
    const group = match[2] ?? "";
    const version = match[1] ?? match[3] ?? "";
    const types = this.types.filter((t) => t.group === group && t.version === version);
    if (types.length === 0) return undefined;
    const verbs = ["create", "delete", "get", "list", "patch", "update", "watch"];
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: group ? `${group}/${version}` : version,
      resources: types.flatMap((t) => {
        const main = {
          name: t.plural,
          singularName: t.kind.toLowerCase(),
          namespaced: t.namespaced,
          kind: t.kind,
          verbs,
        };
        const status = {
          name: `${t.plural}/status`,
          singularName: "",
          namespaced: t.namespaced,
          kind: t.kind,
          verbs: ["get", "patch", "update"],
        };
        return t.statusSubresource ? [main, status] : [main];
      }),
    };
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://fake");
    const method = request.method ?? "GET";
    this.requests.push({ method, path: url.pathname, contentType: request.headers["content-type"] });
    const discovered = method === "GET" ? this.discovery(url.pathname) : undefined;
    if (discovered !== undefined) return this.sendJson(response, 200, discovered);

    const match =
      /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/(status))?$/.exec(
        url.pathname,
      );
    if (!match) throw new ApiError(404, "NotFound", `the fake API server has no route for ${url.pathname}`);
    const [, coreVersion, group = "", groupVersion, namespace, plural, name, subresource] = match;
    const version = coreVersion ?? groupVersion ?? "";
    const type = this.types.find((t) => t.group === group && t.version === version && t.plural === plural);
    if (!type)
      throw new ApiError(
        404,
        "NotFound",
        `the server could not find the requested resource (${url.pathname})`,
      );
    if (subresource && !type.statusSubresource)
      throw new ApiError(404, "NotFound", `${type.plural} has no status subresource`);

    if (name === undefined) {
      if (
        method === "GET" &&
        (url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1")
      ) {
        return this.watch(type, namespace, url, response);
      }
      if (method === "GET") return this.sendList(type, namespace, url, response);
      if (method === "POST") {
        const body = this.parseJson(await this.readBody(request));
        if (namespace !== undefined) metadataOf(body).namespace = namespace;
        return this.sendJson(response, 201, this.create(type, body));
      }
      throw new ApiError(405, "MethodNotAllowed", `${method} on a collection`);
    }

    const key = this.key(type, namespace, name);
    const part = subresource ? "status" : "spec";
    switch (method) {
      case "GET": {
        const stored = this.store.get(key);
        if (!stored) throw new ApiError(404, "NotFound", `${type.plural} "${name}" not found`);
        return this.sendJson(response, 200, stored.object);
      }
      case "PUT": {
        const body = this.parseJson(await this.readBody(request));
        const stored = this.store.get(key);
        if (!stored) throw new ApiError(404, "NotFound", `${type.plural} "${name}" not found`);
        this.checkPrecondition(type, name, body, stored.object);
        return this.sendJson(response, 200, this.update(type, key, body, part));
      }
      case "PATCH": {
        const existed = this.store.has(key);
        const patched = await this.patch(type, key, namespace, name, part, request, url);
        return this.sendJson(response, existed ? 200 : 201, patched); // an apply that creates answers 201
      }
      case "DELETE":
        return this.sendJson(response, 200, this.delete(type, key));
      default:
        throw new ApiError(405, "MethodNotAllowed", `${method} is not supported by the fake`);
    }
  }

  private parseJson(text: string): JsonObject {
    const value: unknown = JSON.parse(text);
    if (!isObject(value)) throw new ApiError(400, "BadRequest", "the request body is not a JSON object");
    return value;
  }

  private async patch(
    type: FakeResourceType,
    key: string,
    namespace: string | undefined,
    name: string,
    part: "spec" | "status",
    request: IncomingMessage,
    url: URL,
  ): Promise<JsonObject> {
    const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim();
    const text = await this.readBody(request);
    const stored = this.store.get(key);
    if (contentType === "application/merge-patch+json") {
      if (!stored) throw new ApiError(404, "NotFound", `${type.plural} "${name}" not found`);
      const patch = this.parseJson(text);
      this.checkPrecondition(type, name, patch, stored.object);
      const merged = jsonMergePatch(stored.object, patch) as JsonObject;
      return this.update(type, key, merged, part);
    }
    if (contentType !== "application/apply-patch+yaml") {
      throw new ApiError(415, "UnsupportedMediaType", `the fake does not support patch type ${contentType}`);
    }
    const manager = url.searchParams.get("fieldManager");
    if (!manager) throw new ApiError(400, "BadRequest", "PATCH: fieldManager is required for apply patch");
    const applied: unknown = parseYaml(text);
    if (!isObject(applied)) throw new ApiError(400, "BadRequest", "apply patch body is not an object");
    const expectedApiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    if (applied.apiVersion !== expectedApiVersion || applied.kind !== type.kind) {
      throw new ApiError(
        400,
        "BadRequest",
        `apply patch: apiVersion/kind must be ${expectedApiVersion}/${type.kind}`,
      );
    }
    const appliedMetadata = metadataOf(applied);
    if (appliedMetadata.name !== name)
      throw new ApiError(400, "BadRequest", "apply patch: metadata.name does not match the URL");
    if (
      namespace !== undefined &&
      appliedMetadata.namespace !== undefined &&
      appliedMetadata.namespace !== namespace
    ) {
      throw new ApiError(400, "BadRequest", "apply patch: metadata.namespace does not match the URL");
    }
    const managerKey = `${part}:${manager}`;
    if (stored) {
      this.checkPrecondition(type, name, applied, stored.object);
      this.takeOwnership(stored, part, managerKey, applied, url.searchParams.get("force") === "true");
    }
    if (!stored) {
      if (part === "status") throw new ApiError(404, "NotFound", `${type.plural} "${name}" not found`);
      return this.create(
        type,
        { ...applied, metadata: { ...appliedMetadata, namespace: namespace ?? null } },
        [managerKey, applied],
      );
    }
    const result = serverSideApply(stored.object, stored.applied.get(managerKey), applied);
    const updated = this.update(type, key, result, part);
    stored.applied.set(managerKey, applied);
    return updated;
  }

  /** A write that names a resourceVersion applies only to that version of the object (optimistic
   *  concurrency): anything else is 409 Conflict. */
  private checkPrecondition(type: FakeResourceType, name: string, body: JsonObject, live: JsonObject): void {
    const sent = isObject(body.metadata) ? body.metadata.resourceVersion : undefined;
    if (sent !== undefined && sent !== null && sent !== metadataOf(live).resourceVersion) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${type.plural} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
  }

  /** Server-side apply conflicts: a field another manager applied with a different value is theirs; without
   *  `force` the apply fails with 409 naming every such field and its manager, with `force` the field
   *  changes hands (the other manager no longer owns it, so its next apply will not remove it). Applying the
   *  same value makes the field shared, which is no conflict. */
  private takeOwnership(
    stored: StoredObject,
    part: "spec" | "status",
    managerKey: string,
    applied: JsonObject,
    force: boolean,
  ): void {
    const mine = appliedFields(applied);
    const conflicts: { manager: string; field: string }[] = [];
    const lost = new Map<string, Set<string>>();
    for (const [otherKey, otherApplied] of stored.applied) {
      if (otherKey === managerKey || !otherKey.startsWith(`${part}:`)) continue;
      const theirs = appliedFields(otherApplied);
      for (const [field, value] of mine) {
        const theirValue = theirs.get(field);
        if (theirValue === undefined || theirValue === value) continue;
        conflicts.push({ manager: otherKey.slice(part.length + 1), field });
        lost.set(otherKey, (lost.get(otherKey) ?? new Set()).add(field));
      }
    }
    if (conflicts.length === 0) return;
    if (!force) {
      const list = conflicts.map((conflict) => `conflict with "${conflict.manager}": ${conflict.field}`);
      throw new ApiError(
        409,
        "Conflict",
        `Apply failed with ${conflicts.length} conflict${conflicts.length === 1 ? "" : "s"}: ${list.join("; ")}`,
      );
    }
    for (const [otherKey, fields] of lost) {
      stored.applied.set(otherKey, withoutFields(stored.applied.get(otherKey) ?? {}, fields));
    }
  }

  private sendList(
    type: FakeResourceType,
    namespace: string | undefined,
    url: URL,
    response: ServerResponse,
  ): void {
    const selector = parseLabelSelector(url.searchParams.get("labelSelector"));
    // Like a real API server, list items carry no apiVersion/kind (only the list does); watch events do.
    const items = this.listStored(type, namespace)
      .map((stored) => stored.object)
      .filter((object) => selector(labelsOf(object)))
      .map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
    this.sendJson(response, 200, {
      kind: `${type.kind}List`,
      apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
      metadata: { resourceVersion: String(this.resourceVersion) },
      items,
    });
  }

  private watch(
    type: FakeResourceType,
    namespace: string | undefined,
    url: URL,
    response: ServerResponse,
  ): void {
    const since = Number(url.searchParams.get("resourceVersion") || this.resourceVersion);
    response.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    response.flushHeaders();
    if (since < this.compactedThrough) {
      // The API server answers a watch from a compacted resourceVersion with an ERROR event carrying a
      // 410 Status, then ends the watch; the client must list again.
      const status = {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: `too old resource version: ${since} (${this.compactedThrough})`,
        reason: "Expired",
        code: 410,
      };
      this.expiredWatches += 1;
      response.end(`${JSON.stringify({ type: "ERROR", object: status })}\n`);
      return;
    }
    const watcher: Watcher = {
      resource: type,
      namespace,
      selector: parseLabelSelector(url.searchParams.get("labelSelector")),
      response,
      bookmarks: url.searchParams.get("allowWatchBookmarks") === "true",
      request: `${url.pathname}${url.search}`,
    };
    for (const event of this.history) if (event.resourceVersion > since) this.send(watcher, event);
    this.watchers.add(watcher);
    response.on("close", () => this.watchers.delete(watcher));
  }
}
