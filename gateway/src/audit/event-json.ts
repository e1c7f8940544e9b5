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

/** The lines of a spool's text (each event's JSON, `\n`-terminated), without their newlines. */
export function textLines(text: Uint8Array): string[] {
  const lines = Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString("utf8").split("\n");
  // The text ends with a newline: the last piece is the empty rest after it.
  lines.pop();
  return lines;
}

/**
 * The events of a spool's text. A line that does not parse is skipped and told to `onUnreadable`: no retry could
 * deliver it, and it must not hold up the events after it.
 */
export function parsedLines(text: Uint8Array, onUnreadable: (error: unknown) => void): ChainedAuditEvent[] {
  const events: ChainedAuditEvent[] = [];
  for (const line of textLines(text)) {
    try {
      events.push(parsedEvent(line));
    } catch (error) {
      onUnreadable(error);
    }
  }
  return events;
}

/**
 * The spool's text of events: each one's JSON and a newline. In memory of its own, not a slice of Node's shared
 * buffer pool: a spool keeps it while its exporter waits, and a small slice would keep a whole 8 KiB pool slab.
 */
export function eventsText(events: readonly ChainedAuditEvent[]): Buffer {
  const text = events.map((event) => `${eventJson(event)}\n`).join("");
  const buffer = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  buffer.write(text);
  return buffer;
}
