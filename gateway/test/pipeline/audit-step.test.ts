// Step 9 on its own, through the real AuditLog: what a request's facts become on the record.
import { expect, test } from "vitest";
import type { ChainedAuditEvent } from "../../src/audit/audit-event.ts";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { recordAudit } from "../../src/pipeline/audit-step.ts";

test("the source is the socket address, an IPv4 client of a dual-stack listener named by its IPv4 address", async () => {
  const written: ChainedAuditEvent[] = [];
  const log = new AuditLog({
    gateway: "gw",
    sinks: [{ name: "test", write: async (batch) => void written.push(...batch) }],
  });
  const facts = { requestId: "r", server: "s", method: "tools/call", status: 200, latencyMs: 1 };
  for (const source of ["::ffff:192.0.2.7", "2001:db8::1", "192.0.2.8", undefined]) {
    recordAudit(log, { ...facts, source });
  }
  await log.drain();
  expect(written.map((event) => [event.kind, event.source])).toEqual([
    ["call_completed", "192.0.2.7"],
    ["call_completed", "2001:db8::1"],
    ["call_completed", "192.0.2.8"],
    ["call_completed", null],
  ]);
});
