// How check() results map to /health and /ready responses, on the real routes (Hono app, in process).
// health.ts and readiness.ts next to svc.json, and the legacy svc.json fields run against built projects in health-project.test.ts.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { parseSettings } from "../src/project/settings.ts";
import { type CheckModule, mountHealth, runCheck } from "../src/runtime/health.ts";

function appWith(options: { settings?: object; health?: () => unknown; readiness?: () => unknown }) {
  const app = new Hono();
  const module = (file: string, check: (() => unknown) | undefined): CheckModule | undefined =>
    check ? { file, check } : undefined;
  const health = module("health.ts", options.health);
  const readiness = module("readiness.ts", options.readiness);
  mountHealth(app, {
    settings: parseSettings({ name: "t", ...options.settings }),
    readySince: new Date("2026-01-01T00:00:00Z"),
    ...(health ? { health } : {}),
    ...(readiness ? { readiness } : {}),
  });
  return app;
}

describe("check() returns a Response with its own status, or an object → 200 JSON", () => {
  it("sends a Response as it is", async () => {
    const app = appWith({ health: () => new Response(JSON.stringify({ custom: true }), { status: 299 }) });
    const response = await app.request("/health");
    expect(response.status).toBe(299);
    expect(await response.json()).toEqual({ custom: true });
  });

  it("turns a plain object into 200 JSON, sync or async", async () => {
    const body = { status: "pass", services: { db: "up" }, version: "1.2.3" };
    for (const check of [() => body, async () => body]) {
      const response = await appWith({ readiness: check }).request("/ready");
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(await response.json()).toEqual(body);
    }
  });
});

describe("unhealthy or not ready → 503", () => {
  it("answers 503 for status fail, healthy/ready false and false", async () => {
    const results = [{ status: "fail" }, { healthy: false }, { ready: false }, false];
    for (const result of results) {
      const response = await appWith({ health: async () => result, readiness: () => result }).request(
        "/health",
      );
      expect(response.status, JSON.stringify(result)).toBe(503);
      expect((await appWith({ readiness: () => result }).request("/ready")).status).toBe(503);
    }
  });

  it("answers 200 pass for true and for a check that returns nothing", async () => {
    for (const result of [true, undefined]) {
      const response = await appWith({ health: () => result }).request("/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: "pass" });
    }
  });
});

describe("degraded but serving → 200 with degraded: true", () => {
  it("keeps 200 and the message", async () => {
    const body = { status: "pass", degraded: true, message: "cache unavailable, serving from origin" };
    const response = await appWith({ readiness: async () => body }).request("/ready");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(body);
  });
});

describe("an exception → 503 { status: fail, error }", () => {
  it("reports a synchronous throw and an async rejection", async () => {
    const checks = [
      () => {
        throw new Error("database unreachable");
      },
      async () => {
        throw new Error("database unreachable");
      },
    ];
    for (const check of checks) {
      const response = await appWith({ health: check }).request("/health");
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: "fail", error: "database unreachable" });
    }
  });

  it("reports a check that never finishes, and one returning an unusable value", async () => {
    const slow = await runCheck({ file: "health.ts", check: () => new Promise(() => {}) }, 50);
    expect(slow.status).toBe(503);
    expect(await slow.json()).toMatchObject({ status: "fail", error: "check() did not finish within 50 ms" });
    const odd = await appWith({ health: () => "ok" }).request("/health");
    expect(odd.status).toBe(503);
    expect(((await odd.json()) as { error: string }).error).toContain("returned a string");
  });
});

describe("conventional fields", () => {
  it("the default /ready carries status, timestamp and ready_since", async () => {
    const response = await appWith({}).request("/ready");
    expect(response.status).toBe(200);
    const body = (await response.json()) as { timestamp: string };
    expect(body).toMatchObject({ status: "pass", ready_since: "2026-01-01T00:00:00.000Z" });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  });

  it("a failure carries an ISO 8601 UTC timestamp", async () => {
    const body = (await (await appWith({ health: () => false }).request("/health")).json()) as {
      timestamp: string;
    };
    expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe("the defaults only without a custom file and with health checks enabled", () => {
  it("serves the defaults when no file exists", async () => {
    const app = appWith({});
    const health = await app.request("/health");
    expect(health.status).toBe(200);
    expect(await health.text()).toBe("OK");
    expect((await app.request("/ready")).status).toBe(200);
  });

  it("serves nothing when health checks are disabled", async () => {
    const app = appWith({ settings: { health_check_enabled: false } });
    expect((await app.request("/health")).status).toBe(404);
    expect((await app.request("/ready")).status).toBe(404);
  });

  it("a custom file replaces the default, also when health checks are disabled", async () => {
    const app = appWith({
      settings: { health_check_enabled: false },
      health: () => ({ status: "pass", custom: 1 }),
    });
    expect(await (await app.request("/health")).json()).toEqual({ status: "pass", custom: 1 });
    expect((await app.request("/ready")).status).toBe(404);
  });

  it("honours the legacy path and body of the default health endpoint", async () => {
    const app = appWith({ settings: { health_check_path: "/healthz", health_check_response: "alive" } });
    const response = await app.request("/healthz");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("alive");
    expect((await app.request("/health")).status).toBe(404);
  });
});
