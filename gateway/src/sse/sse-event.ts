// One Server-Sent Event as it travels through the gateway. Kept close to the wire (data lines, comments,
// the raw `id:` and `retry:`) so that writing it back out reproduces what the upstream meant, and a policy
// can still read or replace the JSON-RPC message inside.

export interface SseEvent {
  /** `id:` value; undefined when the event had none. Empty string is meaningful (it resets the last id). */
  id?: string;
  /** `event:` type; undefined means the default `message`. */
  event?: string;
  /** `data:` lines, in order; undefined when the event had no data field (e.g. a priming or retry-only event). */
  data?: string[];
  /** `retry:` reconnection time in milliseconds. */
  retry?: number;
  /** Comment lines (without the leading colon), e.g. keep-alive pings. */
  comments?: string[];
}

/** The event's data as one string, the way an EventSource consumer sees it. */
export function eventData(event: SseEvent): string | undefined {
  return event.data?.join("\n");
}

/** Serialises an event back to the wire, ending with the blank line that dispatches it. */
export function serializeSseEvent(event: SseEvent): string {
  let out = "";
  if (event.comments !== undefined) for (const comment of event.comments) out += `:${comment}\n`;
  if (event.event !== undefined) out += `event: ${event.event}\n`;
  // Always `field: value`, even for an empty value: the bare `data` form is valid SSE, but the common form is
  // what every client parser has been tested against.
  if (event.id !== undefined) out += `id: ${event.id}\n`;
  if (event.retry !== undefined) out += `retry: ${event.retry}\n`;
  if (event.data !== undefined) for (const line of event.data) out += `data: ${line}\n`;
  return `${out}\n`;
}
