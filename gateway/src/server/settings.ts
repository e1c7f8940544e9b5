// Operational settings read once from the environment at start (documented in docs/operations.md). Each bad
// value is an error naming its variable, so a typo cannot silently become a default.
import { resolve } from "node:path";
import { forwardedRequestHeaders } from "../proxy/headers.ts";
import { parseAllowedOrigins } from "../proxy/origin-guard.ts";

export interface GatewaySettings {
  drainDelayMs: number;
  drainTimeoutMs: number;
  upstreamTimeoutMs: number;
  maxBodyBytes: number;
  /** SVC_MAX_UPSTREAM_RESPONSE_BYTES: the largest JSON answer read from an upstream. */
  maxUpstreamResponseBytes: number;
  /** SVC_MAX_SSE_EVENT_BYTES: the largest single SSE event (with its unfinished line) held from an upstream. */
  maxSseEventBytes: number;
  upstreamConnections: number;
  /** GET notification streams per upstream origin on this process, in a pool of their own. */
  upstreamStreamConnections: number;
  /** JSON-RPC messages one POST may carry (a batch). */
  maxBatchMessages: number;
  /** A session unused this long is forgotten by the gateway. */
  sessionIdleTimeoutMs: number;
  /** Open sessions per user and server. */
  maxSessionsPerUser: number;
  /** POST/DELETE requests in flight per user on this process. */
  maxInFlightPerUser: number;
  /** GET notification streams open per user on this process. */
  maxStreamsPerUser: number;
  configPollMs: number;
  /** SVC_CONTROL_PLANE_HEARTBEAT_SECONDS: how often the gateway reports to its control plane. */
  controlPlaneHeartbeatMs: number;
  allowedOrigins: Set<string> | "any";
  /** SVC_ALLOW_ANONYMOUS=true: without identity providers, requests run as `anonymous` instead of being refused. */
  allowAnonymous: boolean;
  /** SVC_ALLOW_ANONYMOUS_REMOTE=true: anonymous access may also be served on a non-loopback address. */
  allowAnonymousRemote: boolean;
  /** SVC_PUBLIC_URL: the origin clients use (behind a proxy); else taken from each request's Host header. */
  publicUrl: string | undefined;
  /** The client request headers upstreams receive: the built-in list plus SVC_FORWARD_REQUEST_HEADERS. */
  forwardRequestHeaders: ReadonlySet<string>;
  /** SVC_AUDIT_SPOOL_DIR, absolute: where each exporter's undelivered audit events wait (audit/spool.ts). */
  auditSpoolDir: string;
  /** SVC_AUDIT_SPOOL_MAX_BYTES: cap on one exporter's undelivered bytes; past it its new events are dropped. */
  auditSpoolMaxBytes: number;
  /** SVC_AUDIT_FAILING_AFTER_SECONDS: how long a sink fails every attempt before it is `failing` (UNHEALTHY). */
  auditFailingAfterMs: number;
  /** SVC_AUDIT_EXPORT_NICENESS: the export process's niceness, 0 (as requests) to 19 (only spare CPU). */
  auditExportNiceness: number;
  /** SVC_AUDIT_EXPORT_DEFER_SECONDS: how long exports may wait while the gateway is busy (0: never). */
  auditExportDeferMs: number;
}

export class SettingsError extends Error {
  override readonly name = "SettingsError";
}

function number(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new SettingsError(`${name} must be a number from ${min} to ${max}, got '${text}'`);
  }
  return value;
}

/** Only the exact words: a typo must not silently open (or close) the gateway. */
function strictFlag(env: Record<string, string | undefined>, name: string): boolean {
  const text = env[name]?.trim().toLowerCase();
  if (text === undefined || text === "" || text === "false") return false;
  if (text === "true") return true;
  throw new SettingsError(`${name} must be 'true' or 'false', got '${env[name]}'`);
}

function publicUrl(env: Record<string, string | undefined>): string | undefined {
  const text = env.SVC_PUBLIC_URL?.trim();
  if (text === undefined || text === "") return undefined;
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return url.origin;
  } catch {}
  throw new SettingsError(
    `SVC_PUBLIC_URL must be an http(s) URL such as https://mcp.example.com, got '${text}'`,
  );
}

function whole(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const value = number(env, name, fallback, min, max);
  if (!Number.isInteger(value)) throw new SettingsError(`${name} must be a whole number, got '${env[name]}'`);
  return value;
}

function forwardRequestHeaders(env: Record<string, string | undefined>): ReadonlySet<string> {
  const names = (env.SVC_FORWARD_REQUEST_HEADERS ?? "").split(",").filter((name) => name.trim() !== "");
  try {
    return forwardedRequestHeaders(names);
  } catch (error) {
    throw new SettingsError(`SVC_FORWARD_REQUEST_HEADERS: ${(error as Error).message}`);
  }
}

export function readSettings(env: Record<string, string | undefined>): GatewaySettings {
  const upstreamConnections = Math.floor(number(env, "SVC_UPSTREAM_CONNECTIONS", 128, 1, 10_000));
  const maxInFlightPerUser = whole(env, "SVC_MAX_INFLIGHT_PER_USER", 32, 1, 10_000);
  // Fair share: one user must never be able to hold every connection the other users' calls need.
  if (upstreamConnections > 1 && maxInFlightPerUser > upstreamConnections / 2) {
    throw new SettingsError(
      `SVC_MAX_INFLIGHT_PER_USER (${maxInFlightPerUser}) must be at most half of SVC_UPSTREAM_CONNECTIONS (${upstreamConnections}): one user could otherwise hold every connection to an upstream`,
    );
  }
  return {
    drainDelayMs: number(env, "SVC_DRAIN_DELAY_SECONDS", 5, 0, 600) * 1000,
    drainTimeoutMs: number(env, "SVC_DRAIN_TIMEOUT_SECONDS", 25, 0, 3600) * 1000,
    upstreamTimeoutMs: number(env, "SVC_UPSTREAM_TIMEOUT_SECONDS", 60, 0.01, 3600) * 1000,
    maxBodyBytes: Math.floor(number(env, "SVC_MAX_BODY_BYTES", 4 * 1024 * 1024, 1, 1024 * 1024 * 1024)),
    maxUpstreamResponseBytes: Math.floor(
      number(env, "SVC_MAX_UPSTREAM_RESPONSE_BYTES", 8 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    ),
    maxSseEventBytes: Math.floor(
      number(env, "SVC_MAX_SSE_EVENT_BYTES", 8 * 1024 * 1024, 1, 1024 * 1024 * 1024),
    ),
    upstreamConnections,
    upstreamStreamConnections: whole(env, "SVC_UPSTREAM_STREAM_CONNECTIONS", 1024, 1, 100_000),
    maxBatchMessages: whole(env, "SVC_MAX_BATCH_MESSAGES", 100, 1, 10_000),
    sessionIdleTimeoutMs: whole(env, "SVC_SESSION_IDLE_TIMEOUT_SECONDS", 86_400, 60, 30 * 86_400) * 1000,
    maxSessionsPerUser: whole(env, "SVC_MAX_SESSIONS_PER_USER", 64, 1, 100_000),
    maxInFlightPerUser,
    maxStreamsPerUser: whole(env, "SVC_MAX_STREAMS_PER_USER", 16, 1, 100_000),
    configPollMs: number(env, "SVC_CONFIG_POLL_SECONDS", 5, 0, 3600) * 1000,
    controlPlaneHeartbeatMs: number(env, "SVC_CONTROL_PLANE_HEARTBEAT_SECONDS", 10, 1, 300) * 1000,
    allowedOrigins: parseAllowedOrigins(env.SVC_ALLOWED_ORIGINS),
    allowAnonymous: strictFlag(env, "SVC_ALLOW_ANONYMOUS"),
    allowAnonymousRemote: strictFlag(env, "SVC_ALLOW_ANONYMOUS_REMOTE"),
    publicUrl: publicUrl(env),
    forwardRequestHeaders: forwardRequestHeaders(env),
    // Resolved once at start, so a later chdir cannot split one spool across two directories.
    auditSpoolDir: resolve(env.SVC_AUDIT_SPOOL_DIR?.trim() || "svc-audit-spool"),
    auditSpoolMaxBytes: whole(env, "SVC_AUDIT_SPOOL_MAX_BYTES", 256 * 1024 * 1024, 64 * 1024, 1024 ** 4),
    auditFailingAfterMs: number(env, "SVC_AUDIT_FAILING_AFTER_SECONDS", 300, 1, 86_400) * 1000,
    auditExportNiceness: whole(env, "SVC_AUDIT_EXPORT_NICENESS", 10, 0, 19),
    auditExportDeferMs: number(env, "SVC_AUDIT_EXPORT_DEFER_SECONDS", 10, 0, 300) * 1000,
  };
}
