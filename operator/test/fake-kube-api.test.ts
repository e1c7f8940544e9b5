import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";

// The fake API server answers like a real one on the points the operator depends on; if it did not, the
// controller tests would prove nothing.
let api: FakeKubeApi;
beforeAll(async () => {
  api = new FakeKubeApi();
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

describe("fake Kubernetes API server", () => {
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
