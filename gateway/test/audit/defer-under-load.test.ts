// Exports wait while the gateway is busy: the gate's rule (busy closes, idle or the longest wait opens, a forced
// opening lasts until the delivering exporters caught up), and the audit log honouring it for spooled sinks only,
// with a drain that does not wait for it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { DeferUnderLoad } from "../../src/audit/defer-under-load.ts";
import type { SinkStatus } from "../../src/audit/sink-queue.ts";
import { GatewayMetrics } from "../../src/runtime/metrics.ts";
import { sinkStatus } from "./support/sink-status.ts";
import { range, seqs, TestSink, waitFor } from "./support/test-sink.ts";

/** A gate whose utilisation and clock the test sets. */
function scriptedGate(maxDeferMs = 10_000) {
  let now = 0;
  let utilization = 0;
  const resumed: [number, boolean][] = [];
  const gate = new DeferUnderLoad({
    busyUtilization: 0.5,
    idleUtilization: 0.25,
    maxDeferMs,
    caughtUpEvents: 1_000,
    now: () => now,
    utilization: () => utilization,
    onResumed: (deferredMs, forced) => resumed.push([deferredMs, forced]),
  });
  return {
    gate,
    resumed,
    sample(load: number, exporters: SinkStatus[] = [], advanceMs = 250) {
      now += advanceMs;
      utilization = load;
      gate.check(() => exporters);
    },
  };
}

describe("the gate", () => {
  test("closes while the event loop is busy and opens once the load has dropped well below", async () => {
    const { gate, resumed, sample } = scriptedGate();
    sample(0.3);
    expect(gate.open).toBe(true);
    sample(0.8);
    expect(gate.open).toBe(false);
    let opened = false;
    void gate.whenOpen().then(() => {
      opened = true;
    });
    sample(0.9);
    // A dip within a busy stretch keeps it closed.
    sample(0.4);
    await Promise.resolve();
    expect(opened).toBe(false);
    sample(0.2);
    await waitFor(() => expect(opened).toBe(true));
    expect(gate.open).toBe(true);
    expect(resumed).toEqual([[750, false]]);
  });

  test("never waits longer than the limit; then delivers until every delivering exporter caught up", () => {
    const { gate, resumed, sample } = scriptedGate(1_000);
    sample(0.9);
    for (let i = 0; i < 3; i++) sample(0.9);
    expect(gate.open).toBe(false);
    sample(0.9);
    expect(gate.open).toBe(true);
    expect(resumed).toEqual([[1_000, true]]);
    // Still busy, but behind: stays open. A receiver that is down does not count (its backlog cannot shrink).
    sample(0.9, [sinkStatus("search_index:es", "ok", 5_000), sinkStatus("siem:sentinel", "failing", 80_000)]);
    expect(gate.open).toBe(true);
    sample(0.9, [sinkStatus("search_index:es", "ok", 900), sinkStatus("siem:sentinel", "failing", 80_000)]);
    expect(gate.open).toBe(false);
  });

  test("the metrics say whether exports are waiting", () => {
    const { gate, sample } = scriptedGate();
    const metrics = new GatewayMetrics();
    try {
      metrics.watchExportDeferral(() => !gate.open);
      expect(metrics.render()).toMatch(/^svc_gateway_audit_exports_deferred 0$/m);
      sample(0.9);
      expect(metrics.render()).toMatch(/^svc_gateway_audit_exports_deferred 1$/m);
      sample(0.1);
      expect(metrics.render()).toMatch(/^svc_gateway_audit_exports_deferred 0$/m);
    } finally {
      metrics.close();
    }
  });

  test("a limit of 0 never holds exports back", () => {
    const { gate, sample } = scriptedGate(0);
    sample(1);
    sample(1);
    expect(gate.open).toBe(true);
  });
});

describe("the audit log with the gate", () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  test("spooled exporters wait while it is closed, local sinks do not; opening delivers all, in order", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-defer-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { gate, sample } = scriptedGate();
    sample(0.9);
    // The queue asks to be told when the gate opens only once it has a batch ready to send.
    let waiting = 0;
    const watched = {
      get open() {
        return gate.open;
      },
      whenOpen() {
        waiting += 1;
        return gate.whenOpen();
      },
    };
    const stdout = new TestSink("stdout");
    const exporter = new TestSink("search_index:es");
    const log = new AuditLog({
      gateway: "gw",
      sinks: [stdout, exporter],
      lingerMs: 0,
      spool: { dir, maxBytes: 1 << 20 },
      exportGate: watched,
    });
    cleanups.push(() => log.close(0));
    for (let i = 0; i < 20; i++) log.record({ kind: "call_completed", request_id: `r${i}` });
    await waitFor(() => expect(stdout.received).toHaveLength(20));
    await waitFor(() => expect(waiting).toBeGreaterThan(0));
    expect(log.sinkStatus().find((each) => each.name === exporter.name)?.backlogEvents).toBe(20);
    expect(exporter.attempts).toHaveLength(0);
    sample(0.1);
    await waitFor(() => expect(exporter.received).toHaveLength(20));
    expect(seqs(exporter.received)).toEqual(range(0, 20));
  });

  test("a drain delivers what waits even while the gate is closed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-defer-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { gate, sample } = scriptedGate();
    sample(0.9);
    const exporter = new TestSink("otel:collector");
    const log = new AuditLog({
      gateway: "gw",
      sinks: [exporter],
      lingerMs: 0,
      spool: { dir, maxBytes: 1 << 20 },
      exportGate: gate,
    });
    cleanups.push(() => log.close(0));
    for (let i = 0; i < 5; i++) log.record({ kind: "call_completed", request_id: `r${i}` });
    await log.drain();
    expect(gate.open).toBe(false);
    expect(seqs(exporter.received)).toEqual(range(0, 5));
  });
});
