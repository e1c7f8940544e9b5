import type { Hono } from "hono";
import type { Settings } from "../project/settings.ts";

/** A check() that runs longer than this is reported as failed (probes have their own, usually shorter, timeouts). */
export const CHECK_TIMEOUT_MS = 10_000;

export interface CheckModule {
  file: string;
  check: () => unknown;
}

const NO_STORE = { "cache-control": "no-store" };

function json(body: Record<string, unknown>, status: number): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...NO_STORE },
  });
}

function failure(error: string): Response {
  return json({ status: "fail", error, timestamp: new Date().toISOString() }, 503);
}

/**
 * How a check() result maps to a response (README "Health and readiness"): a Response is sent
 * as it is; an object is sent as JSON with 200, or 503 when it says `status: "fail"` (or `healthy`/`ready`
 * false); `degraded: true` keeps 200; true / nothing → 200 pass, false → 503 fail; an exception, a timeout or
 * any other return → 503 `{ status: "fail", error }`.
 */
export function toCheckResponse(result: unknown): Response {
  if (result instanceof Response) return result;
  if (result === true || result === undefined || result === null) {
    return json({ status: "pass", timestamp: new Date().toISOString() }, 200);
  }
  if (result === false) return json({ status: "fail", timestamp: new Date().toISOString() }, 503);
  if (typeof result === "object" && !Array.isArray(result)) {
    const body = result as Record<string, unknown>;
    const failed = body.status === "fail" || body.healthy === false || body.ready === false;
    return json(body, failed ? 503 : 200);
  }
  const kind = Array.isArray(result) ? "an array" : `a ${typeof result}`;
  return failure(`check() returned ${kind}; return an object, a boolean or a Response`);
}

export async function runCheck(module: CheckModule, timeoutMs = CHECK_TIMEOUT_MS): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`check() did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    // Promise.resolve().then: a synchronous throw becomes a rejection like an async one.
    return toCheckResponse(await Promise.race([Promise.resolve().then(() => module.check()), timeout]));
  } catch (error) {
    return failure(error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}

/** Validates a loaded health.ts / readiness.ts module: it must export a function `check`. */
export function checkModule(file: string, module: Record<string, unknown>): CheckModule {
  const check = module.check;
  if (typeof check !== "function") throw new Error(`${file}: must export a function check()`);
  return { file, check: check as () => unknown };
}

export interface HealthOptions {
  settings: Settings;
  health?: CheckModule;
  readiness?: CheckModule;
  readySince: Date;
}

/** Mounts /health and /ready (the defaults only without a custom file and with health checks enabled). */
export function mountHealth(app: Hono, options: HealthOptions): void {
  const { settings, health, readiness } = options;
  const enabled = settings.health_check_enabled !== false;
  if (health) {
    app.get("/health", () => runCheck(health));
  } else if (enabled) {
    const body = settings.health_check_response ?? "OK";
    app.get(settings.health_check_path ?? "/health", (c) => c.text(body, 200, NO_STORE));
  }
  if (readiness) {
    app.get("/ready", () => runCheck(readiness));
  } else if (enabled) {
    const readySince = options.readySince.toISOString();
    app.get("/ready", () =>
      json({ status: "pass", timestamp: new Date().toISOString(), ready_since: readySince }, 200),
    );
  }
}
