// Health levels from the audit sinks' states, with an injectable clock (no waiting 5 minutes): HEALTHY → DEGRADED
// (retrying) → UNHEALTHY (failing past the limit, /health 503) → HEALTHY once the sink takes its backlog; a full spool
// is UNHEALTHY at once. And the per-sink metric series.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { GatewayMetrics } from "../../src/runtime/metrics.ts";
import { healthAnswer } from "../../src/server/health.ts";
import { TestSink, waitFor } from "./support/test-sink.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function spoolDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-health-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function health(log: AuditLog) {
  return healthAnswer({
    kv: { kind: "memory", healthy: true, breaker: "closed" } as Parameters<typeof healthAnswer>[0]["kv"],
    httpClientOk: true,
    upstreams: 1,
    anonymousAccess: false,
    auditSinks: log.sinkStatus(),
  });
}

test("HEALTHY → DEGRADED while retrying → UNHEALTHY after 5 minutes of failures → HEALTHY when delivered", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const sink = new TestSink("otel:collector");
  const log = new AuditLog({
    gateway: "gw",
    sinks: [new TestSink("stdout"), sink],
    spool: { dir: await spoolDir(), maxBytes: 1 << 20 },
    lingerMs: 0,
    retryDelayMs: 1,
    retryCapMs: 5,
    now: () => now,
  });
  cleanups.push(() => log.close(0));
  expect(health(log)).toMatchObject({ status: 200, body: { status: "healthy" } });

  sink.down();
  log.record({ kind: "call_completed" });
  await waitFor(() => expect(sink.attempts.length).toBeGreaterThan(0));
  expect(health(log)).toMatchObject({
    status: 200,
    body: {
      status: "degraded",
      audit: {
        stdout: { state: "ok", backlog_events: 0, backlog_bytes: 0 },
        "otel:collector": { state: "retrying", backlog_events: 1 },
      },
    },
  });
  const backlogBytes = (health(log).body.audit as Record<string, { backlog_bytes: number }>)[
    "otel:collector"
  ];
  expect(backlogBytes?.backlog_bytes).toBeGreaterThan(100);

  now += 5 * 60_000 - 1;
  expect(health(log).body.status).toBe("degraded");
  now += 1;
  expect(health(log)).toMatchObject({
    status: 503,
    body: { status: "unhealthy", audit: { "otel:collector": { state: "failing" } } },
  });

  sink.up();
  await log.drain();
  expect(health(log)).toMatchObject({
    status: 200,
    body: {
      status: "healthy",
      audit: { "otel:collector": { state: "ok", backlog_events: 0, backlog_bytes: 0 } },
    },
  });
});

test("a spool at its cap is UNHEALTHY at once; a backlog past the threshold is DEGRADED", async () => {
  const full = new TestSink("siem:full").block(); // accepting, but slowly: the backlog alone says "behind"
  const log = new AuditLog({
    gateway: "gw",
    sinks: [full],
    spool: { dir: await spoolDir(), maxBytes: 2048 },
    lingerMs: 0,
    retryDelayMs: 1,
    retryCapMs: 5,
    behindEvents: 3,
  });
  cleanups.push(() => log.close(0));
  for (let i = 0; i < 3; i++) log.record({ kind: "call_completed" });
  await waitFor(() => expect(full.attempts.length).toBe(1));
  expect(health(log)).toMatchObject({ status: 200, body: { status: "degraded" } });
  expect(log.sinkStatus()[0]?.state).toBe("behind");
  full.release();
  await log.drain();

  full.down();
  for (let i = 0; i < 20; i++) log.record({ kind: "call_completed" });
  await waitFor(() => expect(log.sinkStatus()[0]?.dropped).toBeGreaterThan(0));
  expect(health(log)).toMatchObject({
    status: 503,
    body: { status: "unhealthy", audit: { "siem:full": { state: "spool_full" } } },
  });
});

test("metrics: exported, failures, spooled and dropped per sink", async () => {
  const sink = new TestSink("search_index:es").down();
  const log = new AuditLog({
    gateway: "gw",
    sinks: [sink],
    spool: { dir: await spoolDir(), maxBytes: 1 << 20 },
    lingerMs: 0,
    retryDelayMs: 1,
    retryCapMs: 5,
  });
  cleanups.push(() => log.close(0));
  const metrics = new GatewayMetrics();
  cleanups.push(async () => metrics.close());
  metrics.watchAuditSinks(() => log.sinkStatus());
  log.record({ kind: "call_completed" });
  log.record({ kind: "call_completed" });
  await waitFor(() => expect(sink.attempts.length).toBeGreaterThan(1));
  let text = metrics.render();
  expect(text).toContain('svc_gateway_audit_spooled_events{sink="search_index:es"} 2');
  expect(text).toMatch(/svc_gateway_audit_export_failures_total\{sink="search_index:es"\} [1-9]/);
  sink.up();
  await log.drain();
  text = metrics.render();
  expect(text).toContain('svc_gateway_audit_events_exported_total{sink="search_index:es"} 2');
  expect(text).toContain('svc_gateway_audit_spooled_events{sink="search_index:es"} 0');
  expect(text).toContain('svc_gateway_audit_dropped_total{sink="search_index:es"} 0');
});
