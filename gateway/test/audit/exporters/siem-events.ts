// Chained audit events for the SIEM tests: one instance's chain from seq 0, every column filled but reason and count.
import { type ChainedAuditEvent, completeEvent } from "../../../src/audit/audit-event.ts";
import { HashChain } from "../../../src/audit/hash-chain.ts";

export function events(count: number, reason: string | null = null): ChainedAuditEvent[] {
  const chain = new HashChain("gw-a#1");
  return Array.from({ length: count }, (_, index) =>
    chain.link(
      completeEvent(
        {
          time: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
          kind: "rbac_decision",
          request_id: `req-${index}`,
          source: "127.0.0.1:50000",
          server: "files",
          method: "tools/call",
          capability: "tools/read_file",
          subject: "alice",
          provider: "corp",
          groups: ["eng", "ops"],
          decision: "allow",
          reason,
          status: 200,
          latency_ms: 1.25,
        },
        "gw-a",
      ),
    ),
  );
}
