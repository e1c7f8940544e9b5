// Pipeline step 9: the audit trail of what the gateway decided for one request. Runs after the answer is built;
// AuditLog.record() only queues (no hashing, no I/O), so this costs a few object allocations per request.
import type { AuditEventInput, AuditKind } from "../audit/audit-event.ts";
import type { AuditLog } from "../audit/audit-log.ts";
import type { GatewayErrorCode } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import type { FirewallFinding } from "../inspect/firewall-inspector.ts";
import type { WithheldMessage } from "../inspect/inspector.ts";
import type { RequestRecord } from "../inspect/request-record.ts";
import { type Capability, capabilityKey } from "../rbac/capability.ts";
import type { RbacDecision } from "../rbac/decide.ts";

/** What the pipeline learnt about one request, filled in as it goes. */
export interface AuditFacts {
  requestId: string;
  /** The client's socket address (the TCP peer), as Node reports it. */
  source: string | undefined;
  server: string;
  method: string;
  principal?: Principal;
  /** The refusal or failure that answered the request, if one did. */
  failure?: GatewayErrorCode;
  /** TokenRejected reason for a 401. */
  authFailure?: string;
  /** Message of the failure, for the reason field. */
  failureMessage?: string;
  /** RBAC decisions to put on record (only for servers with rbac_audit). */
  decisions?: Array<{ decision: RbacDecision; capability: Capability | undefined }>;
  capability?: Capability;
  /** Messages of the answer that were withheld (known for JSON answers when the call is recorded). */
  withheld?: { count: number; first: WithheldMessage };
  /** The request id of the exchange a multi round-trip retry continues. */
  retryOf?: string;
  status: number;
  latencyMs: number;
}

function kindOfFailure(code: GatewayErrorCode): AuditKind | undefined {
  if (code === "unauthorized") return "authentication_failed";
  if (code === "rate_limited" || code === "user_capacity") return "rate_limited";
  if (code === "session_not_found") return "session_refused";
  if (code === "replayed") return "replay_refused";
  // Refused by an inspector before forwarding (the firewall's 403, a message past scrubbing's bounds).
  if (code === "injection_detected" || code === "uninspectable") return "message_withheld";
  // Sending the user to consent is no upstream failure: upstream OAuth records it itself (authorization_requested).
  if (code === "upstream_authorization_required") return undefined;
  if (code.startsWith("upstream_")) return "upstream_error";
  return undefined;
}

/** An IPv4 client of a dual-stack listener appears as `::ffff:a.b.c.d`; the record names it `a.b.c.d`. */
function sourceAddress(address: string | undefined): string | null {
  if (address === undefined) return null;
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

export function recordAudit(audit: AuditLog, facts: AuditFacts): void {
  const who = facts.principal;
  const base: Omit<AuditEventInput, "kind"> = {
    request_id: facts.requestId,
    source: sourceAddress(facts.source),
    server: facts.server === "" ? null : facts.server,
    method: facts.method,
    subject: who?.sub ?? null,
    provider: who?.idp ?? null,
    groups: who?.groups ?? [],
  };
  for (const { decision, capability } of facts.decisions ?? []) {
    audit.record({
      ...base,
      kind: "rbac_decision",
      capability: capability === undefined ? null : capabilityKey(capability),
      decision: decision.allowed ? "allow" : "deny",
      reason: `${decision.rule}: ${decision.reason}`,
    });
  }
  const capability = facts.capability === undefined ? null : capabilityKey(facts.capability);
  if (facts.failure !== undefined) {
    const kind = kindOfFailure(facts.failure);
    if (kind === undefined) return; // not a decision (404, 413, …): the access log has it
    const event = {
      ...base,
      capability,
      decision: kind === "upstream_error" ? null : ("deny" as const),
      reason: facts.authFailure ?? facts.failureMessage ?? facts.failure,
      status: facts.status,
      latency_ms: facts.latencyMs,
    };
    // Anyone can send a junk token for free: those are aggregated rather than one event each.
    if (kind === "authentication_failed") audit.recordAuthenticationFailure(event);
    else audit.record({ ...event, kind });
    return;
  }
  // Refused by capability RBAC (a JSON-RPC error with HTTP 200) is on record through its rbac_decision. An answer the
  // inspectors withheld is a refusal of the call's result: decision deny, and which inspector, why, how many.
  const withheld = facts.withheld;
  const reasons: string[] = [];
  if (withheld !== undefined) {
    reasons.push(
      `answer withheld: ${withheld.count} message(s), first by ${withheld.first.inspector} (${withheld.first.reason})`,
    );
  }
  if (facts.retryOf !== undefined) reasons.push(`retry of ${facts.retryOf}`);
  audit.record({
    ...base,
    kind: "call_completed",
    capability,
    decision: withheld === undefined ? "allow" : "deny",
    reason: reasons.length === 0 ? null : reasons.join("; "),
    status: facts.status,
    latency_ms: facts.latencyMs,
  });
}

/**
 * One message not passed on as sent (an answer replaced by an error, a notification or server request dropped, an
 * unreadable answer or event): the inspector, the reason and the method; never the text. Recorded as it happens, so
 * a stream's withheld messages are on record event by event.
 */
export function recordWithheld(audit: AuditLog, record: RequestRecord, withheld: WithheldMessage): void {
  const who = record.principal;
  audit.record({
    kind: "message_withheld",
    request_id: record.requestId,
    source: sourceAddress(record.source),
    server: record.server === "" ? null : record.server,
    method: withheld.method?.slice(0, 200) ?? null,
    capability: record.capability === undefined ? null : capabilityKey(record.capability),
    subject: who?.sub ?? null,
    provider: who?.idp ?? null,
    groups: who?.groups ?? [],
    decision: "deny",
    reason: `response inspector=${withheld.inspector} reason=${withheld.reason}`,
  });
}

/**
 * One message had personal data replaced (PII scrubbing): which entity types and how many, in which direction; never
 * the values. Recorded as it happens, so a long stream's replacements are on record event by event.
 */
export function recordScrubbed(
  audit: AuditLog,
  record: RequestRecord,
  direction: "request" | "response",
  method: string | undefined,
  counts: Record<string, number>,
): void {
  const who = record.principal;
  const replaced = Object.entries(counts)
    .map(([entity, count]) => `${entity}=${count}`)
    .join(", ");
  audit.record({
    kind: "pii_scrubbed",
    request_id: record.requestId,
    source: sourceAddress(record.source),
    server: record.server === "" ? null : record.server,
    method: method?.slice(0, 200) ?? null,
    capability: record.capability === undefined ? null : capabilityKey(record.capability),
    subject: who?.sub ?? null,
    provider: who?.idp ?? null,
    groups: who?.groups ?? [],
    reason: `${direction}: ${replaced}`,
  });
}

/**
 * The firewall found something in one message (or a detector gave no answer): the detector, its score, the
 * direction, method and tool, and what was done; never the text. `decision` is deny when the message was refused,
 * allow when it went through (monitor mode, or a detector without answer that fails open).
 */
export function recordFirewallFinding(
  audit: AuditLog,
  record: RequestRecord,
  finding: FirewallFinding,
): void {
  const who = record.principal;
  const facts = [
    finding.direction,
    `detector=${finding.detector}`,
    finding.score === null ? "score=none" : `score=${finding.score.toFixed(3)}`,
    `threshold=${finding.threshold}`,
  ];
  if (finding.rules.length > 0) facts.push(`rules=${finding.rules.join("+")}`);
  if (finding.unavailable !== undefined) facts.push(`unavailable=${JSON.stringify(finding.unavailable)}`);
  if (finding.truncated) facts.push("truncated");
  audit.record({
    kind: "injection_detected",
    request_id: record.requestId,
    source: sourceAddress(record.source),
    server: record.server === "" ? null : record.server,
    method: finding.method,
    capability: finding.tool === undefined ? null : `tools/${finding.tool.slice(0, 200)}`,
    subject: who?.sub ?? null,
    provider: who?.idp ?? null,
    groups: who?.groups ?? [],
    decision: finding.blocked ? "deny" : "allow",
    reason: facts.join(" "),
  });
}
