import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";

// The fake API server answers like a real one on the points the operator depends on; if it did not, the
// controller tests would prove nothing. Each test names the section of the Kubernetes API documentation
// (kubernetes.io/docs) whose rule it checks, and states the rule.
let api: FakeKubeApi;
beforeAll(async () => {
  api = new FakeKubeApi([
    {
      // A custom resource with a structural schema that has defaults and a status subresource.
      group: "example.dev",
      version: "v1",
      kind: "Widget",
      plural: "widgets",
      namespaced: true,
      statusSubresource: true,
      validate: (object) => {
        const spec = object.spec as JsonObject | undefined;
        return typeof spec?.size === "number" ? [] : ["spec.size: Required value"];
      },
      schema: {
        type: "object",
        properties: {
          spec: {
            type: "object",
            properties: {
              size: { type: "integer" },
              color: { type: "string", default: "blue" },
              parts: {
                type: "array",
                items: {
                  type: "object",
                  properties: { name: { type: "string" }, count: { type: "integer", default: 1 } },
                },
              },
              limits: { type: "object", default: {}, properties: { max: { type: "integer", default: 10 } } },
            },
          },
        },
      },
    },
  ]);
  await api.start();
});
afterAll(() => api.close());

const cm = "/api/v1/namespaces/ns/configmaps";
async function request(method: string, path: string, body?: unknown, contentType = "application/json") {
  const response = await fetch(`${api.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": contentType },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as JsonObject };
}

const widgets = "/apis/example.dev/v1/namespaces/ns/widgets";

async function readLines(path: string, count: number): Promise<JsonObject[]> {
  const controller = new AbortController();
  const response = await fetch(`${api.url}${path}`, { signal: controller.signal });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (text.split("\n").length <= count) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += new TextDecoder().decode(chunk.value);
  }
  controller.abort();
  return text
    .trim()
    .split("\n")
    .slice(0, count)
    .map((line) => JSON.parse(line) as JsonObject);
}

describe("fake Kubernetes API server", () => {
  // API concepts › Resource versions, and API conventions › Concurrency control and consistency: a write
  // carrying metadata.resourceVersion succeeds only if the object is still at that version, else 409.
  it("refuses a write based on a stale resourceVersion with 409 Conflict", async () => {
    const created = await request("POST", cm, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "a" },
      data: { k: "1" },
    });
    expect(created.status).toBe(201);
    const version = (created.body.metadata as JsonObject).resourceVersion;
    const first = await request("PUT", `${cm}/a`, { ...created.body, data: { k: "2" } });
    expect(first.status).toBe(200);
    const stale = await request("PUT", `${cm}/a`, {
      ...created.body,
      metadata: { ...(created.body.metadata as JsonObject), resourceVersion: version },
      data: { k: "3" },
    });
    expect(stale).toMatchObject({ status: 409, body: { kind: "Status", reason: "Conflict", code: 409 } });
    const stalePatch = await request(
      "PATCH",
      `${cm}/a`,
      { metadata: { resourceVersion: version }, data: { k: "4" } },
      "application/merge-patch+json",
    );
    expect(stalePatch.status).toBe(409);
    expect(api.get("ConfigMap", "ns", "a")?.data).toEqual({ k: "2" });
  });

  it("server-side apply: needs a field manager and the apply content type, and drops fields a manager stops applying", async () => {
    const apply = (
      manager: string | undefined,
      data: JsonObject,
      contentType = "application/apply-patch+yaml",
    ) =>
      request(
        "PATCH",
        `${cm}/b${manager ? `?fieldManager=${manager}&force=true` : ""}`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b" }, data },
        contentType,
      );
    expect((await apply(undefined, { x: "1" })).status).toBe(400);
    expect((await apply("op", { x: "1" }, "application/strategic-merge-patch+json")).status).toBe(415);
    expect((await apply("op", { x: "1", y: "2" })).status).toBe(201);
    await apply("someone-else", { z: "3" });
    const after = await apply("op", { x: "1" });
    expect(after.body.data).toEqual({ x: "1", z: "3" });
  });

  // Server-Side Apply › Conflicts: "a conflict is a special status error that occurs when an Apply operation
  // tries to change a field that another manager also claims to manage"; the request fails with 409 unless
  // it is forced (force=true), which makes the applier the field's only manager. Applying the same value as
  // another manager is no conflict: the field becomes shared.
  it("server-side apply: 409 on a field another manager owns with a different value, unless forced", async () => {
    const apply = (manager: string, data: JsonObject, force = false) =>
      request(
        "PATCH",
        `${cm}/ssa?fieldManager=${manager}${force ? "&force=true" : ""}`,
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "ssa" }, data },
        "application/apply-patch+yaml",
      );
    expect((await apply("helm", { replicas: "1", shared: "s" })).status).toBe(201);
    expect((await apply("kubectl", { shared: "s", own: "o" })).status).toBe(200);
    const refused = await apply("kubectl", { shared: "s", replicas: "3" });
    expect(refused).toMatchObject({ status: 409, body: { kind: "Status", reason: "Conflict", code: 409 } });
    expect(refused.body.message).toBe('Apply failed with 1 conflict: conflict with "helm": .data.replicas');
    expect(api.get("ConfigMap", "ns", "ssa")?.data).toEqual({ replicas: "1", shared: "s", own: "o" });
    // Forced: kubectl takes .data.replicas; when helm next applies without it, the field stays (helm no
    // longer owns it) while helm's other fields follow helm's apply.
    expect((await apply("kubectl", { shared: "s", replicas: "3" }, true)).status).toBe(200);
    expect((await apply("helm", { shared: "s" })).body.data).toEqual({ shared: "s", replicas: "3" });
    expect((await apply("helm", { replicas: "5" })).status).toBe(409);
  });

  // Custom resources › Defaulting: defaults in a structural schema are applied when an object is created or
  // updated, for fields the object does not set, inside objects it has (and objects that are themselves
  // defaulted), list items and so on. Validation › the schema: an invalid object is refused with 422.
  it("applies the CRD schema's defaults and refuses an invalid custom resource with 422", async () => {
    const created = await request("POST", widgets, {
      apiVersion: "example.dev/v1",
      kind: "Widget",
      metadata: { name: "w1" },
      spec: { size: 2, parts: [{ name: "a" }, { name: "b", count: 3 }] },
    });
    expect(created.status).toBe(201);
    expect(created.body.spec).toEqual({
      size: 2,
      color: "blue",
      parts: [
        { name: "a", count: 1 },
        { name: "b", count: 3 },
      ],
      limits: { max: 10 },
    });
    const updated = await request(
      "PATCH",
      `${widgets}/w1`,
      { spec: { color: null, limits: { max: 4 } } },
      "application/merge-patch+json",
    );
    expect(updated.body.spec).toMatchObject({ color: "blue", limits: { max: 4 } });
    // A defaulted field written back unchanged is no change: same generation.
    expect((updated.body.metadata as JsonObject).generation).toBe(2);
    const invalid = await request("POST", widgets, {
      apiVersion: "example.dev/v1",
      kind: "Widget",
      metadata: { name: "w2" },
      spec: {},
    });
    expect(invalid).toMatchObject({ status: 422, body: { reason: "Invalid", code: 422 } });
    expect(invalid.body.message).toContain("spec.size: Required value");
  });

  // Custom resources › Status subresource: with it enabled, writes to the main resource ignore status,
  // writes to /status ignore everything but status, and only spec changes increment metadata.generation.
  it("keeps spec and status apart, and bumps generation only for spec changes", async () => {
    api.put({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "d", namespace: "ns" },
      spec: { replicas: 1 },
    });
    api.setStatus("Deployment", "ns", "d", { availableReplicas: 1 });
    const path = "/apis/apps/v1/namespaces/ns/deployments/d";
    const specWrite = await request(
      "PATCH",
      path,
      { spec: { replicas: 2 }, status: { availableReplicas: 9 } },
      "application/merge-patch+json",
    );
    expect(specWrite.body).toMatchObject({
      metadata: { generation: 2 },
      spec: { replicas: 2 },
      status: { availableReplicas: 1 },
    });
    const statusWrite = await request(
      "PATCH",
      `${path}/status`,
      { spec: { replicas: 5 }, status: { availableReplicas: 2 } },
      "application/merge-patch+json",
    );
    expect(statusWrite.body).toMatchObject({
      metadata: { generation: 2 },
      spec: { replicas: 2 },
      status: { availableReplicas: 2 },
    });
  });

  // API concepts › Efficient detection of changes: a watch from a resourceVersion gets every change after it.
  it("replays events after a resourceVersion on watch, as JSON lines", async () => {
    const list = await request("GET", cm);
    const since = (list.body.metadata as JsonObject).resourceVersion;
    api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "w", namespace: "ns" }, data: {} });
    api.remove("ConfigMap", "ns", "w");
    const controller = new AbortController();
    const response = await fetch(`${api.url}${cm}?watch=true&resourceVersion=${since}`, {
      signal: controller.signal,
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (text.split("\n").length < 3) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const events = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; object: { metadata: { name: string } } });
    expect(events.map((event) => `${event.type} ${event.object.metadata.name}`)).toEqual([
      "ADDED w",
      "DELETED w",
    ]);
  });

  // API concepts › Watch bookmarks: a client that sends allowWatchBookmarks=true may get BOOKMARK events
  // holding only the current resourceVersion (of the watched kind, no other fields); others never get them.
  it("sends bookmarks only to watches that allow them", async () => {
    const since = (
      api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bm", namespace: "ns" } })
        .metadata as JsonObject
    ).resourceVersion;
    const withPath = `${cm}?watch=true&resourceVersion=${since}&allowWatchBookmarks=true`;
    const withoutPath = `${cm}?watch=true&resourceVersion=${since}`;
    const withBookmarks = readLines(withPath, 2);
    const without = readLines(withoutPath, 1);
    await expect.poll(() => api.openWatches()).toEqual(expect.arrayContaining([withPath, withoutPath]));
    api.bookmark();
    api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bm2", namespace: "ns" } });
    const [bookmark, added] = await withBookmarks;
    expect(bookmark).toEqual({
      type: "BOOKMARK",
      object: { apiVersion: "v1", kind: "ConfigMap", metadata: { resourceVersion: since } },
    });
    expect(added).toMatchObject({ type: "ADDED", object: { metadata: { name: "bm2" } } });
    expect(await without).toMatchObject([{ type: "ADDED", object: { metadata: { name: "bm2" } } }]);
  });

  // API concepts › Efficient detection of changes: when the requested resourceVersion is older than the
  // history the server keeps (etcd compaction), the watch fails with 410 Gone (an ERROR event whose Status
  // has code 410, reason Expired) and the client must list again, then watch from the list's version.
  it("answers a watch from a compacted resourceVersion with 410 Gone; a fresh list's version watches fine", async () => {
    const old = (
      api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "old", namespace: "ns" } })
        .metadata as JsonObject
    ).resourceVersion;
    api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "newer", namespace: "ns" } });
    api.compact();
    expect(await readLines(`${cm}?watch=true&resourceVersion=${old}`, 1)).toMatchObject([
      { type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } },
    ]);
    const relisted = await request("GET", cm);
    expect((relisted.body.items as JsonObject[]).map((item) => (item.metadata as JsonObject).name)).toContain(
      "newer",
    );
    const freshPath = `${cm}?watch=true&resourceVersion=${(relisted.body.metadata as JsonObject).resourceVersion}`;
    const fresh = readLines(freshPath, 1);
    await expect.poll(() => api.openWatches()).toContain(freshPath);
    api.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after", namespace: "ns" } });
    expect(await fresh).toMatchObject([{ type: "ADDED", object: { metadata: { name: "after" } } }]);
  });

  it("deletes dependents with their owner (garbage collection by owner reference)", async () => {
    const owner = api.put({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "owner", namespace: "ns" },
    });
    const uid = (owner.metadata as JsonObject).uid as string;
    api.put({
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "dependent",
        namespace: "ns",
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid }],
      },
    });
    expect((await request("DELETE", `${cm}/owner`)).status).toBe(200);
    expect(api.get("Service", "ns", "dependent")).toBeUndefined();
  });
});
