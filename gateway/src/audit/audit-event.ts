/** What happened, one kind per decision the gateway takes on the record. */
export type AuditKind =
  | "authentication_failed"
  | "rbac_decision"
  | "rate_limited"
  | "replay_refused"
  | "session_refused"
  | "pii_scrubbed"
  | "injection_detected"
  /** A message an inspector (or the relay, unable to read it) did not pass on: refused, withheld, dropped. */
  | "message_withheld"
  | "upstream_error"
  | "call_completed"
  | "events_dropped"
  /** Upstream OAuth (upstream_auth_type oauth): reason authorization_requested, connected, refreshed, revoked, or a failure (decision deny); never a token. */
  | "upstream_oauth";

/**
 * One audit event (the documented schema, gateway/docs/access.md, "Audit trail"). Fields that do not apply are null, never
 * absent, so every line has the same shape for the search index and SIEM tables.
 */
export interface AuditEvent {
  /** ISO 8601 UTC. */
  time: string;
  kind: AuditKind;
  request_id: string | null;
  gateway: string;
  /** The client's socket address (the TCP peer; X-Forwarded-For is client input and not trusted). */
  source: string | null;
  server: string | null;
  /** JSON-RPC method, or the HTTP method when the request never got parsed. */
  method: string | null;
  /** `tools/<name>`, `resources/<uri>`, `prompts/<name>`. */
  capability: string | null;
  subject: string | null;
  provider: string | null;
  groups: string[];
  decision: "allow" | "deny" | null;
  reason: string | null;
  /** HTTP status returned to the client. */
  status: number | null;
  latency_ms: number | null;
  /**
   * How many occurrences this event stands for: on `authentication_failed` (aggregated, failure-aggregator.ts) and
   * `events_dropped`; null on events that stand for one decision.
   */
  count: number | null;
}

/** An event as written: chained to the previous one of the same gateway instance. */
export interface ChainedAuditEvent extends AuditEvent {
  /** The writing process; each instance keeps its own chain. */
  instance: string;
  /** 0 for an instance's first event, then +1 per event. */
  seq: number;
  /** `hash` of the previous event of this instance; 64 zeros for the first. */
  prev_hash: string;
  /** SHA-256 (hex) of the canonical JSON of every other field. */
  hash: string;
}

export const GENESIS_HASH = "0".repeat(64);

export type AuditEventInput = Partial<AuditEvent> & Pick<AuditEvent, "kind">;

/** Fills the fields an event leaves out, so callers name only what they know. */
export function completeEvent(input: AuditEventInput, gateway: string, now: Date = new Date()): AuditEvent {
  return {
    time: input.time ?? now.toISOString(),
    kind: input.kind,
    request_id: input.request_id ?? null,
    gateway: input.gateway ?? gateway,
    source: input.source ?? null,
    server: input.server ?? null,
    method: input.method ?? null,
    capability: input.capability ?? null,
    subject: input.subject ?? null,
    provider: input.provider ?? null,
    groups: input.groups ?? [],
    decision: input.decision ?? null,
    reason: input.reason ?? null,
    status: input.status ?? null,
    latency_ms: input.latency_ms ?? null,
    count: input.count ?? null,
  };
}
