// Authentication failures through the real AuditLog: aggregated per (source, server, reason) and window, bounded in
// keys, and still one intact hash chain.
import { describe, expect, test } from "vitest";
import type { ChainedAuditEvent } from "../../src/audit/audit-event.ts";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { OTHER_SOURCES } from "../../src/audit/failure-aggregator.ts";
import { verifyChain } from "../../src/audit/verify-chain.ts";

/** An AuditLog whose written events the test can read; windows long enough to close only when the test says. */
function auditLog(failures: { windowMs?: number; maxKeys?: number } = {}) {
  const written: ChainedAuditEvent[] = [];
  const log = new AuditLog({
    gateway: "gw",
    sinks: [{ name: "test", write: async (batch) => void written.push(...batch) }],
    failures: { windowMs: 3_600_000, ...failures },
  });
  return { log, written };
}

const failure = (source: string, reason = "malformed", server = "s") => ({
  request_id: `${source}-${Math.random()}`,
  source,
  server,
  method: "POST",
  decision: "deny" as const,
  reason,
  status: 401,
  latency_ms: 0.1,
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in 10 s");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const total = (events: ChainedAuditEvent[]) => events.reduce((sum, event) => sum + (event.count ?? 0), 0);

describe("aggregated authentication failures", () => {
  test("a key's first failure is written at once, whole; its further ones as one counted event when the window closes", async () => {
    const { log, written } = auditLog();
    for (let i = 0; i < 5; i++) log.recordAuthenticationFailure(failure("10.0.0.1"));
    for (let i = 0; i < 3; i++) log.recordAuthenticationFailure(failure("10.0.0.1", "expired"));
    log.recordAuthenticationFailure(failure("10.0.0.1", "malformed", "other-server"));
    // Before the window closes: one event per key, each the first failure with its request id.
    await until(() => written.length === 3);
    expect(written.map((e) => [e.kind, e.reason, e.server, e.count, e.request_id !== null])).toEqual([
      ["authentication_failed", "malformed", "s", 1, true],
      ["authentication_failed", "expired", "s", 1, true],
      ["authentication_failed", "malformed", "other-server", 1, true],
    ]);
    await log.drain(); // closes the window
    expect(
      written.slice(3).map((e) => [e.source, e.reason, e.server, e.count, e.request_id, e.status]),
    ).toEqual([
      ["10.0.0.1", "malformed", "s", 4, null, 401],
      ["10.0.0.1", "expired", "s", 2, null, 401],
    ]);
    expect(total(written)).toBe(9);
    expect(verifyChain(written.map((e) => JSON.stringify(e)).join("\n")).problems).toEqual([]);
  });

  test("the window closes by itself, and the next failure of a key opens a new one", async () => {
    const { log, written } = auditLog({ windowMs: 20 });
    for (let i = 0; i < 3; i++) log.recordAuthenticationFailure(failure("10.0.0.2"));
    await until(() => written.length === 2);
    expect(written.map((e) => e.count)).toEqual([1, 2]);
    log.recordAuthenticationFailure(failure("10.0.0.2"));
    await until(() => written.length === 3);
    expect(written[2]).toMatchObject({ count: 1, source: "10.0.0.2" });
    expect(written[2]?.request_id).not.toBeNull();
    await log.drain();
    expect(total(written)).toBe(4);
  });

  test("keys beyond the bound go into one other-sources event: a spray of sources writes a bounded number of events", async () => {
    const { log, written } = auditLog({ maxKeys: 3 });
    for (let source = 0; source < 1000; source++) {
      log.recordAuthenticationFailure(failure(`10.1.${source >> 8}.${source & 255}`));
      log.recordAuthenticationFailure(failure(`10.1.${source >> 8}.${source & 255}`));
    }
    await log.drain();
    // 3 first failures, 3 summaries, 1 for every other source.
    expect(written).toHaveLength(7);
    expect(written.at(-1)).toMatchObject({
      kind: "authentication_failed",
      reason: OTHER_SOURCES,
      source: null,
      server: null,
      decision: "deny",
      count: 1994,
    });
    expect(total(written)).toBe(2000);
  });
});
