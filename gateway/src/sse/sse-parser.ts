// Incremental SSE parser (WHATWG "event stream interpretation"): bytes in, whole events out, whatever the
// chunk boundaries (split lines, split CRLF, split UTF-8 sequences). The gateway never buffers a stream:
// it holds at most one unfinished event.
import type { SseEvent } from "./sse-event.ts";

export class SseParser {
  readonly #decoder = new TextDecoder("utf-8");
  #buffer = "";
  /** The previous chunk ended with CR: a leading LF in the next chunk belongs to it. */
  #pendingCr = false;
  #event: SseEvent = {};
  #hasFields = false;

  /** Feeds a chunk; returns the events it completed (usually zero or one). */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    if (this.#pendingCr) {
      this.#pendingCr = false;
      if (text.startsWith("\n")) text = text.slice(1);
    }
    this.#buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    const buffer = this.#buffer;
    for (let i = 0; i < buffer.length; i++) {
      const code = buffer.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      const line = buffer.slice(start, i);
      if (code === 13) {
        if (i + 1 < buffer.length) {
          if (buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.#pendingCr = true;
        }
      }
      start = i + 1;
      const event = this.#line(line);
      if (event !== undefined) events.push(event);
    }
    this.#buffer = buffer.slice(start);
    return events;
  }

  /** End of stream: an unterminated event is discarded, as the SSE standard requires. */
  end(): void {
    this.#buffer = "";
    this.#event = {};
    this.#hasFields = false;
  }

  #line(line: string): SseEvent | undefined {
    if (line === "") {
      if (!this.#hasFields) return undefined;
      const event = this.#event;
      this.#event = {};
      this.#hasFields = false;
      return event;
    }
    const colon = line.indexOf(":");
    if (colon === 0) {
      if (this.#event.comments === undefined) this.#event.comments = [];
      this.#event.comments.push(line.slice(1));
      this.#hasFields = true;
      return undefined;
    }
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        if (this.#event.data === undefined) this.#event.data = [];
        this.#event.data.push(value);
        break;
      case "event":
        this.#event.event = value;
        break;
      case "id":
        // An id containing NULL is ignored by the standard; keep the event otherwise intact.
        if (value.includes("\u0000")) return undefined;
        this.#event.id = value;
        break;
      case "retry":
        if (!/^\d+$/.test(value)) return undefined;
        this.#event.retry = Number(value);
        break;
      default:
        return undefined; // unknown fields are ignored, per the standard
    }
    this.#hasFields = true;
    return undefined;
  }
}
