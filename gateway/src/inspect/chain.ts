// Which message inspectors run, in which order, and why: the one place the order is written.
//
// Requests (client → upstream), after RBAC has admitted every message (pipeline step 5):
//   1. PII scrubbing: personal data in arguments never reaches the upstream.
//   2. Prompt-injection firewall: after scrubbing, so what a detector reads contains no personal data (a webhook
//      detector may be another company's service) and what the audit trail says about a message is already scrubbed.
//      Scrubbing only replaces values by placeholders, which leaves an instruction's wording as it was.
//
// Responses (upstream → client), per message of a JSON answer or per SSE event:
//   1. RBAC list filtering: first, so later inspectors spend no work on items the user will never see, and so the
//      tool-hints cache learns annotations from the upstream's own, unaltered list.
//   2. PII scrubbing: after filtering (less to scan), before anything that records or shows the content.
//   3. Prompt-injection firewall: last, on the scrubbed content, for the same reasons as on requests; its
//      spotlighting wraps the text the client will see, so nothing after it may rewrite that text.
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import { type FirewallListener, firewallInspectors } from "./firewall-inspector.ts";
import type { MessageInspector } from "./inspector.ts";
import { rbacListInspector } from "./rbac-list-inspector.ts";
import type { RequestRecord } from "./request-record.ts";
import { type ScrubListener, scrubInspectors } from "./scrub-inspector.ts";

/** What the inspectors report to: the audit trail and metrics (the pipeline binds them). */
export interface InspectionListeners {
  onScrubbed: ScrubListener;
  onFirewallFinding: FirewallListener;
}

export function requestInspectors(record: RequestRecord, listeners: InspectionListeners): MessageInspector[] {
  const inspectors: MessageInspector[] = [];
  const scrubbing = record.route?.scrubbing;
  if (scrubbing !== undefined) inspectors.push(scrubInspectors(scrubbing, listeners.onScrubbed).request);
  const firewall = record.route?.firewall;
  if (firewall !== undefined)
    inspectors.push(firewallInspectors(firewall, listeners.onFirewallFinding).request);
  return inspectors;
}

export function responseInspectors(
  record: RequestRecord,
  snapshot: ConfigSnapshot,
  hints: ToolHintsCache,
  listeners: InspectionListeners,
): MessageInspector[] {
  const inspectors: MessageInspector[] = [];
  const rbac = rbacListInspector(record, snapshot.loaded.config.gateway_policy, hints);
  if (rbac !== undefined) inspectors.push(rbac);
  const scrubbing = record.route?.scrubbing;
  if (scrubbing !== undefined) inspectors.push(scrubInspectors(scrubbing, listeners.onScrubbed).response);
  const firewall = record.route?.firewall;
  if (firewall !== undefined)
    inspectors.push(firewallInspectors(firewall, listeners.onFirewallFinding).response);
  return inspectors;
}
