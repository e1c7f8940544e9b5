// The JSON text of a chained event, made once however many sinks need it. After the hash chain links an event it
// never changes, and the same object goes to every sink: the spool of each exporter, stdout or the audit file, the
// search index's bulk body. Serialising it once per event rather than once per use was a measurable part of
// exporting's CPU cost. Held weakly: the text goes when the event does.
import type { ChainedAuditEvent } from "./audit-event.ts";

const texts = new WeakMap<ChainedAuditEvent, string>();

export function eventJson(event: ChainedAuditEvent): string {
  let text = texts.get(event);
  if (text === undefined) {
    text = JSON.stringify(event);
    texts.set(event, text);
  }
  return text;
}

/** An event parsed from its text (the export process's batches): that text is its JSON, so it is not made again. */
export function parsedEvent(text: string): ChainedAuditEvent {
  const event = JSON.parse(text) as ChainedAuditEvent;
  texts.set(event, text);
  return event;
}

/** An event whose JSON text its maker already has (the hash chain writes it while hashing): kept, not made again. */
export function withJson(event: ChainedAuditEvent, text: string): ChainedAuditEvent {
  texts.set(event, text);
  return event;
}
