import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { GROUP_VERSION } from "../src/api/names.ts";
import type { Logger } from "../src/controller/log.ts";
import { type RunningOperator, startOperator } from "../src/controller/operator.ts";
import type { FakeKubeApi } from "../src/testing/fake-kube-api.ts";
import type { JsonObject } from "../src/testing/merge.ts";
import { fakeClusterWithCrds } from "./support/fake-cluster.ts";

// The control-plane API the operator serves, over HTTP against the fake API server: the document rules (ETag,
// If-None-Match, long poll, the last good policy when a new one does not validate), heartbeats into status, and the
// refusals. The three-gateway acceptance test with real processes is e2e/test/control-plane.test.ts.

vi.setConfig({ testTimeout: 60_000 });

const NS = "org";
const GATEWAY_ID = "7a2b9c4d-1e3f-4a5b-8c6d-9e0f1a2b3c4d";
const KEY = "a-long-random-gateway-key";
let api: FakeKubeApi;
let operator: RunningOperator;
const logs: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
const log: Logger = {
  info: (msg, fields) => logs.push({ level: "info", msg, ...(fields ? { fields } : {}) }),
  warn: (msg, fields) => logs.push({ level: "warn", msg, ...(fields ? { fields } : {}) }),
  error: (msg, fields) => logs.push({ level: "error", msg, ...(fields ? { fields } : {}) }),
};
// A Secret's digest is read again after 5 s at most: a rotation takes that long.
const waitFor = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 20_000, interval: 50 });
const policy = (spec: JsonObject): JsonObject => ({
  apiVersion: GROUP_VERSION,
  kind: "OrganizationPolicy",
  metadata: { name: "acme", namespace: NS },
  spec,
});
const digestSecret = (value: string): JsonObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "keys", namespace: NS },
  data: { main: Buffer.from(value).toString("base64") },
});

function call(endpoint: string, init: RequestInit = {}, key = KEY): Promise<Response> {
  return fetch(`${operator.controlPlane?.url}/v1/gateways/${GATEWAY_ID}/${endpoint}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
  });
}

beforeAll(async () => {
  api = fakeClusterWithCrds();
  await api.start();
  api.put(digestSecret(createHash("sha256").update(KEY).digest("hex")));
  api.put(policy({ serverRbac: { rbacEnabled: true, rbacMode: "deny", deniedGroups: ["contractors"] } }));
  api.put({
    apiVersion: GROUP_VERSION,
    kind: "McpGateway",
    metadata: { name: "main", namespace: NS },
    spec: {
      controlPlaneClient: {
        gatewayId: GATEWAY_ID,
        organizationPolicy: "acme",
        apiKeySha256: { secretKeyRef: { name: "keys", key: "main" } },
      },
    },
  });
  operator = await startOperator({
    server: api.url,
    leaseNamespace: NS,
    leaseName: "op",
    leaderElection: false,
    leaseDurationMs: 1000,
    renewDeadlineMs: 800,
    retryPeriodMs: 200,
    host: "127.0.0.1",
    port: 0,
    controlPlane: { host: "127.0.0.1", port: 0 },
    log,
  });
  await waitFor(async () => expect((await call("policy")).status).toBe(200));
});

afterAll(async () => {
  await operator?.stop();
  await api?.close();
});

describe("control-plane API", () => {
  it("activates a gateway and names its organization (metadata.name when organizationId is unset)", async () => {
    await waitFor(() =>
      expect(
        (
          (api.get("OrganizationPolicy", NS, "acme")?.status as JsonObject | undefined)?.conditions as
            | JsonObject[]
            | undefined
        )?.[0],
      ).toMatchObject({ type: "Accepted", status: "True" }),
    );
    const response = await call("activation", { method: "POST", body: "{}" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ gateway_id: GATEWAY_ID, organization_id: "acme" });
  });

  it("serves the policy in the gateway's snake_case with an ETag, 304 when unchanged, and ends a long poll on change", async () => {
    const first = await call("policy");
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(await first.json()).toEqual({
      organization_id: "acme",
      generation: 1,
      policy: { server_rbac: { rbac_enabled: true, rbac_mode: "deny", denied_groups: ["contractors"] } },
    });
    expect((await call("policy", { headers: { "if-none-match": etag } })).status).toBe(304);

    const held = call("policy?wait=30", { headers: { "if-none-match": etag } });
    api.put(policy({ rateLimit: { requestsPerMinute: 100 } }));
    const changed = await held;
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect(await changed.json()).toMatchObject({
      generation: 2,
      policy: { rate_limit: { requests_per_minute: 100 } },
    });
  });

  it("keeps serving the last good policy when the resource no longer validates, and logs why", async () => {
    const good = await call("policy");
    const goodBody = await good.json();
    // The CRD accepts any string as a pattern; the gateway's schema does not accept this one.
    api.put(
      policy({ scrubbing: { enabled: true, customRules: [{ pattern: "(unclosed", method: "mask" }] } }),
    );
    // Documents are built when asked for: ask until the operator has seen the change.
    await waitFor(async () => {
      await (await call("policy")).body?.cancel();
      expect(logs.some((line) => line.msg.startsWith("OrganizationPolicy is invalid"))).toBe(true);
    });
    const after = await call("policy");
    expect(after.headers.get("etag")).toBe(good.headers.get("etag"));
    expect(await after.json()).toEqual(goodBody);
    // kubectl get organizationpolicies shows it: Accepted=False with the gateway schema's words.
    await waitFor(() => {
      const conditions = (api.get("OrganizationPolicy", NS, "acme")?.status as JsonObject | undefined)
        ?.conditions as JsonObject[] | undefined;
      expect(conditions?.find((condition) => condition.type === "Accepted")).toMatchObject({
        status: "False",
        reason: "Invalid",
        message: expect.stringMatching(
          /scrubbing\.custom_rules\.0\.pattern: .*gateways keep the organization's last valid policy/,
        ),
      });
    });
  });

  it("writes heartbeats into the McpGateway status and refuses a malformed one", async () => {
    const beat = await call("heartbeat", {
      method: "POST",
      body: JSON.stringify({
        health: "DEGRADED",
        version: "0.1.0",
        mode: "distributed",
        policy_generation: 2,
      }),
    });
    expect(beat.status).toBe(204);
    await waitFor(() =>
      expect(
        (api.get("McpGateway", NS, "main")?.status as JsonObject | undefined)?.controlPlane,
      ).toMatchObject({
        gatewayId: GATEWAY_ID,
        health: "DEGRADED",
        policyGeneration: 2,
        version: "0.1.0",
      }),
    );
    const bad = await call("heartbeat", { method: "POST", body: JSON.stringify({ health: "FINE" }) });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/invalid heartbeat: .*health/s);
  });

  it("refuses a wrong key, a missing one and a digest that is not SHA-256 hex, all with the same 401", async () => {
    expect((await call("policy", {}, "wrong")).status).toBe(401);
    expect((await fetch(`${operator.controlPlane?.url}/v1/gateways/${GATEWAY_ID}/policy`)).status).toBe(401);
    api.put(digestSecret(KEY)); // the key itself where its digest belongs: nobody gets in
    await waitFor(async () => expect((await call("policy")).status).toBe(401));
    expect(logs.map((line) => line.fields?.reason)).toEqual(
      expect.arrayContaining(["wrong_key", "no_key_digest"]),
    );
    expect(JSON.stringify(logs)).not.toContain(KEY);
    api.put(digestSecret(createHash("sha256").update(KEY).digest("hex")));
    await waitFor(async () => expect((await call("policy")).status).toBe(200));
  });

  it("keeps a gateway id with the McpGateway that claimed it first: a copy elsewhere is refused and gets an event", async () => {
    // Someone who may create McpGateways in another watched namespace copies main's id, with a key of their own.
    const copyKey = "the-copycat's-own-key";
    api.put({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "copy-keys", namespace: "elsewhere" },
      data: { k: Buffer.from(createHash("sha256").update(copyKey).digest("hex")).toString("base64") },
    });
    api.put({
      apiVersion: GROUP_VERSION,
      kind: "McpGateway",
      metadata: { name: "copycat", namespace: "elsewhere" },
      spec: {
        controlPlaneClient: {
          gatewayId: GATEWAY_ID.toUpperCase(),
          organizationPolicy: "acme",
          apiKeySha256: { secretKeyRef: { name: "copy-keys", key: "k" } },
        },
      },
    });
    await waitFor(() => {
      const events = api
        .list("Event", "elsewhere")
        .filter(
          (event) =>
            (event.involvedObject as JsonObject).name === "copycat" && event.reason === "DuplicateGatewayId",
        );
      expect(events).toEqual([
        expect.objectContaining({
          type: "Warning",
          reason: "DuplicateGatewayId",
          message: expect.stringContaining(`already held by McpGateway ${NS}/main`),
        }),
      ]);
    });
    // The holder is served as before; the newcomer is not, with its own key.
    expect((await call("policy")).status).toBe(200);
    expect((await call("policy", {}, copyKey)).status).toBe(401);
    expect(api.list("Event", NS).some((event) => event.reason === "DuplicateGatewayId")).toBe(false);
    api.remove("McpGateway", "elsewhere", "copycat");
  });
});
