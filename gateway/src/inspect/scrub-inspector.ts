// PII scrubbing as a message inspector: the engine (pii/) scrubs strings and JSON values; which texts of which MCP
// message carry user data is written once, in message-text.ts, and shared with the firewall. Arguments, form data,
// structured content, error data and log data are scrubbed as JSON values (sensitive and whitelisted fields apply,
// numbers long enough to be a card or a phone number are read as their digits); other texts as strings. Both
// directions, on JSON answers and on every SSE event alike.
import { GatewayError } from "../errors/gateway-error.ts";
import type { CompiledScrubbing, LimitExceeded } from "../pii/index.ts";
import type { JsonRpcMessage } from "../sse/json-rpc.ts";
import type { InspectorVerdict, MessageInspector } from "./inspector.ts";
import { KEEP } from "./inspector.ts";
import { editTexts, subjectOf, type TextDirection, type TextEditor } from "./message-text.ts";
import type { RequestRecord } from "./request-record.ts";

export type ScrubDirection = TextDirection;

/** Told about every message that had something replaced: which entity types, how many; never the values. */
export type ScrubListener = (
  record: RequestRecord,
  direction: ScrubDirection,
  method: string | undefined,
  counts: ScrubCounts,
) => void;

/** Replacements by entity type (or rule), never the values. */
export type ScrubCounts = Record<string, number>;

/** Collects what one message's scrubbing replaced; `changed` once anything was. Reads every source of text. */
class Tally implements TextEditor {
  readonly counts: ScrubCounts = {};
  readonly scrubbing: CompiledScrubbing;
  changed = false;
  /** The first bound a scan reached: the message is then refused, never forwarded with unscanned holes. */
  limit: LimitExceeded | undefined;

  constructor(scrubbing: CompiledScrubbing) {
    this.scrubbing = scrubbing;
  }

  reads(): boolean {
    return true;
  }

  text(text: string): string {
    return this.#add(this.scrubbing.scrubText(text)) as string;
  }

  value(value: unknown): unknown {
    return this.#add(this.scrubbing.scrubValue(value));
  }

  #add(result: {
    value: unknown;
    changed: boolean;
    counts: ScrubCounts;
    limitExceeded?: LimitExceeded;
  }): unknown {
    this.limit ??= result.limitExceeded;
    if (!result.changed) return result.value;
    this.changed = true;
    for (const [entity, count] of Object.entries(result.counts)) {
      this.counts[entity] = (this.counts[entity] ?? 0) + count;
    }
    return result.value;
  }
}

/** The scrubbing inspectors for one request: one per direction. */
export function scrubInspectors(
  scrubbing: CompiledScrubbing,
  onScrubbed: ScrubListener,
): { request: MessageInspector; response: MessageInspector } {
  const inspector = (direction: TextDirection): MessageInspector => ({
    name: "pii",
    inspect(record: RequestRecord, message: JsonRpcMessage): InspectorVerdict {
      const tally = new Tally(scrubbing);
      const subject = subjectOf(record, message, direction);
      const out = editTexts(message, subject, tally);
      if (tally.limit !== undefined) return refuseUninspectable(record, tally.limit);
      if (!tally.changed) return KEEP;
      onScrubbed(record, direction, subject.method, tally.counts);
      return { action: "replace", message: out };
    },
  });
  return { request: inspector("request"), response: inspector("response") };
}

function refuseUninspectable(record: RequestRecord, limit: LimitExceeded): InspectorVerdict {
  return {
    action: "refuse",
    error: new GatewayError(
      "uninspectable",
      `The message is too large for PII scrubbing to inspect (${limit.message}); it was not forwarded`,
      { server: record.server },
    ),
  };
}
