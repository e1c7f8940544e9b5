// Choosing the upstream instance: the forms that give several instances, pins in the (memory) KV store, turns
// without affinity, and the answers for a session whose instance is gone.
import { expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/index.ts";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import { MemoryKvStore } from "../../src/kv/index.ts";
import {
  type AffinityDeps,
  chooseInstance,
  nextInstance,
  pinIssuedSession,
  sessionGone,
} from "../../src/pipeline/affinity-step.ts";
import { instanceOriginsFrom, UpstreamInstances } from "../../src/proxy/upstream-instances.ts";
import type { UpstreamRoute } from "../../src/runtime/config-snapshot.ts";
import { SessionPins } from "../../src/sessions/session-pins.ts";

const addresses: Record<string, string[]> = {
  "replicas.internal": ["10.0.0.1", "10.0.0.2", "10.0.0.3"],
  "one.internal": ["10.0.0.9"],
};

function deps(): AffinityDeps {
  return {
    instances: new UpstreamInstances(async (host) =>
      (addresses[host] ?? []).map((address) => ({ address, family: 4 })),
    ),
    pins: new SessionPins(new MemoryKvStore(), 60_000),
    turns: new Map(),
  };
}

function route(url: string, session_affinity = true, instanceOrigins?: string[]): UpstreamRoute {
  const parsed = new URL(url);
  return {
    name: "docs",
    enabled: true,
    origin: parsed.origin,
    path: parsed.pathname,
    authType: "none",
    server: { name: "docs", url, session_affinity } as ServerConfig,
    ...(instanceOrigins ? { instanceOrigins } : {}),
  };
}

test("an http host with several addresses: new sessions take turns, and a pinned session stays put", async () => {
  const d = deps();
  const r = route("http://replicas.internal:8080/mcp");
  const first = await chooseInstance(d, r, undefined);
  const second = await chooseInstance(d, r, undefined);
  expect([first.route.origin, second.route.origin]).toEqual(["http://10.0.0.1:8080", "http://10.0.0.2:8080"]);
  expect(first.route.path).toBe("/mcp");
  await pinIssuedSession(d, second, "session-1");
  for (let i = 0; i < 3; i++) {
    expect((await chooseInstance(d, r, "session-1")).route.origin).toBe("http://10.0.0.2:8080");
  }
});

test("one address, an IP literal or https: one instance, nothing pinned", async () => {
  const d = deps();
  for (const url of ["http://one.internal/mcp", "http://10.1.1.1/mcp", "https://replicas.internal/mcp"]) {
    const choice = await chooseInstance(d, route(url), undefined);
    expect(choice).toMatchObject({ pinned: false, pinIssued: false, others: [] });
    expect(choice.route.origin).toBe(new URL(url).origin);
  }
});

test("a session with no pin, or pinned to an instance no longer listed, is not found (404): never moved", async () => {
  const d = deps();
  const listed = route("http://a.internal/mcp", true, ["http://10.0.0.5:1", "http://10.0.0.6:1"]);
  await expect(chooseInstance(d, listed, "never-pinned")).rejects.toMatchObject({
    code: "session_not_found",
  });
  await d.pins.pin("docs", "s", "http://10.0.0.7:1");
  await expect(chooseInstance(d, listed, "s")).rejects.toMatchObject({ code: "session_not_found" });
  expect(await d.pins.pinned("docs", "s")).toBeUndefined(); // unpinned on the way
});

test("a pinned instance refusing connections ends the session; outside a session the next instance is tried", async () => {
  const d = deps();
  const listed = route("http://a.internal/mcp", true, [
    "http://10.0.0.5:1",
    "http://10.0.0.6:1",
    "http://10.0.0.7:1",
  ]);
  const refused = new GatewayError("upstream_unreachable", "refused");
  const fresh = await chooseInstance(d, listed, undefined);
  const next = nextInstance(fresh, refused);
  expect(next?.route.origin).toBe("http://10.0.0.6:1");
  expect(nextInstance(fresh, new GatewayError("upstream_timeout", "slow"))).toBeUndefined(); // it may have run
  await pinIssuedSession(d, fresh, "s");
  const pinned = await chooseInstance(d, listed, "s");
  expect(nextInstance(pinned, refused)).toBeUndefined();
  expect(await sessionGone(d, pinned, "s", refused)).toMatchObject({ code: "session_not_found" });
  expect(await d.pins.pinned("docs", "s")).toBeUndefined();
});

test("session_affinity false: every request, in a session or not, goes to the next instance; nothing is pinned", async () => {
  const d = deps();
  const r = route("http://replicas.internal/mcp", false);
  const origins = [];
  for (let i = 0; i < 4; i++) {
    const choice = await chooseInstance(d, r, "a-session");
    expect(choice.pinIssued).toBe(false);
    origins.push(choice.route.origin);
  }
  expect(origins).toEqual(["http://10.0.0.1", "http://10.0.0.2", "http://10.0.0.3", "http://10.0.0.1"]);
});

test("SVC_UPSTREAM_INSTANCES_<SERVER>: origins only, each problem named", () => {
  const v = "SVC_UPSTREAM_INSTANCES_DOCS";
  expect(instanceOriginsFrom(" http://10.0.0.5:8080 , http://10.0.0.6:8080,", v)).toEqual([
    "http://10.0.0.5:8080",
    "http://10.0.0.6:8080",
  ]);
  expect(instanceOriginsFrom("", v)).toBeUndefined();
  expect(instanceOriginsFrom("10.0.0.5:8080", v)).toEqual({
    problem: expect.stringMatching(/^SVC_UPSTREAM_INSTANCES_DOCS: '10.0.0.5:8080' .*http/),
  });
  expect(instanceOriginsFrom("http://10.0.0.5/mcp", v)).toEqual({
    problem: expect.stringContaining("without a path"),
  });
});
