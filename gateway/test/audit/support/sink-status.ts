// A sink's status as the audit log reports it, for tests of what decides from those (export priority, deferral).
import type { SinkState, SinkStatus } from "../../../src/audit/sink-queue.ts";

export function sinkStatus(name: string, state: SinkState, backlogEvents: number, stalledMs = 0): SinkStatus {
  return {
    name,
    state,
    backlogEvents,
    backlogBytes: backlogEvents * 500,
    stalledMs,
    exported: 0,
    failures: 0,
    dropped: 0,
    deadLettered: 0,
  };
}
