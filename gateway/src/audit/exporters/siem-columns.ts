// The SIEM table's columns: one row per chained audit event, one column per event field, in PascalCase as Log Analytics
// tables are named. This list is the single source of truth: gateway/docs/siem/table.json (the custom table) and
// gateway/docs/siem/dcr.json (the Data Collection Rule's stream declaration) must declare exactly these columns, in
// this order, with these types (a test compares them).
import type { ChainedAuditEvent } from "../audit-event.ts";

/** Log Analytics column types the table and the DCR stream declaration both accept. */
export type SiemColumnType = "datetime" | "string" | "int" | "long" | "real" | "dynamic";

export interface SiemColumn {
  readonly name: string;
  readonly type: SiemColumnType;
  /** The event field the column carries, unchanged (null stays null, `groups` stays an array). */
  readonly field: keyof ChainedAuditEvent;
}

export const SIEM_COLUMNS: readonly SiemColumn[] = [
  // Every Log Analytics table needs TimeGenerated; the event's own time goes there, not the ingestion time, so a
  // replay after an outage keeps when the decision was taken.
  { name: "TimeGenerated", type: "datetime", field: "time" },
  { name: "Kind", type: "string", field: "kind" },
  { name: "RequestId", type: "string", field: "request_id" },
  { name: "Gateway", type: "string", field: "gateway" },
  { name: "Instance", type: "string", field: "instance" },
  { name: "Seq", type: "long", field: "seq" },
  // The event's chain hash: unique per event, the key to deduplicate an at-least-once redelivery on.
  { name: "Hash", type: "string", field: "hash" },
  { name: "PrevHash", type: "string", field: "prev_hash" },
  { name: "Source", type: "string", field: "source" },
  { name: "Server", type: "string", field: "server" },
  { name: "Method", type: "string", field: "method" },
  { name: "Capability", type: "string", field: "capability" },
  { name: "Subject", type: "string", field: "subject" },
  { name: "Provider", type: "string", field: "provider" },
  { name: "Groups", type: "dynamic", field: "groups" },
  { name: "Decision", type: "string", field: "decision" },
  { name: "Reason", type: "string", field: "reason" },
  { name: "Status", type: "int", field: "status" },
  // Fractional milliseconds (microsecond resolution), hence real.
  { name: "LatencyMs", type: "real", field: "latency_ms" },
  { name: "Count", type: "long", field: "count" },
];

export type SiemRow = Record<string, unknown>;

/** The row the logs ingestion API receives for one event. */
export function siemRowFromEvent(event: ChainedAuditEvent): SiemRow {
  const row: SiemRow = {};
  for (const column of SIEM_COLUMNS) row[column.name] = event[column.field];
  return row;
}
