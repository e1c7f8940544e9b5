// Which message inspectors run, in which order, and why: the one place the order is written.
//
// Requests (client → upstream), after RBAC has admitted every message (pipeline step 5):
//   1. PII scrubbing: personal data in arguments never reaches the upstream.
//   (the prompt-injection firewall will follow scrubbing, so what it records about a message is already scrubbed)
//
// Responses (upstream → client), per message of a JSON answer or per SSE event:
//   1. RBAC list filtering: first, so later inspectors spend no work on items the user will never see, and so the
//      tool-hints cache learns annotations from the upstream's own, unaltered list.
//   2. PII scrubbing: after filtering (less to scan), before anything that records or shows the content.
//   (the firewall will come last, on the scrubbed content, for the same reason as on requests)
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import type { MessageInspector } from "./inspector.ts";
import { rbacListInspector } from "./rbac-list-inspector.ts";
import type { RequestRecord } from "./request-record.ts";
import { type ScrubListener, scrubInspectors } from "./scrub-inspector.ts";

/** What the inspectors report to: the audit trail and metrics (the pipeline binds them). */
export interface InspectionListeners {
  onScrubbed: ScrubListener;
}

export function requestInspectors(record: RequestRecord, listeners: InspectionListeners): MessageInspector[] {
  const scrubbing = record.route?.scrubbing;
  return scrubbing === undefined ? [] : [scrubInspectors(scrubbing, listeners.onScrubbed).request];
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
  return inspectors;
}
