// Incremental SSE parser (WHATWG "event stream interpretation"): bytes in, whole events out, whatever the
// chunk boundaries (split lines, split CRLF, split UTF-8 sequences). The gateway never buffers a stream:
// it holds at most one unfinished event, and that event is bounded.
// Lines are split on the raw bytes (CR and LF never occur inside a UTF-8 sequence), so each byte is looked at
// once: a chunk is scanned from where the previous one stopped, and the unfinished line is kept as the pieces
// that arrived, joined only when its line break comes. Rescanning the held text on every chunk made one long
// line cost quadratic time.
import type { SseEvent } from "./sse-event.ts";

const LF = 10;
const CR = 13;

/** The upstream sent more than `limit` bytes for one event (or one line) without finishing it. */
export class SseEventTooLargeError extends Error {
  override readonly name = "SseEventTooLargeError";
  readonly limit: number;
  /** Events the same chunk completed before the limit was passed: whole and valid, so still worth relaying. */
  readonly completed: SseEvent[];

  constructor(limit: number, completed: SseEvent[]) {
    super(`SSE event exceeds the limit of ${limit} bytes`);
    this.limit = limit;
    this.completed = completed;
  }
}

export interface SseParserOptions {
  /**
   * Most bytes one event may hold before its blank line: every line it keeps (data, comments, id, event,
   * retry) plus the line still unfinished, line breaks not counted. Passing it throws SseEventTooLargeError.
   */
  maxEventBytes: number;
}

export class SseParser {
  readonly #maxEventBytes: number;
  /** The unfinished line, as views of the chunks it arrived in (the caller hands chunks over for good). */
  #partial: Buffer[] = [];
  #partialBytes = 0;
  /** Bytes of the lines the current event keeps so far. */
  #eventBytes = 0;
  /** The previous chunk ended with CR: a leading LF in the next chunk belongs to it. */
  #pendingCr = false;
  /** A byte order mark is dropped from the start of the stream only, as TextDecoder does by default. */
  #firstLine = true;
  #event: SseEvent = {};
  #hasFields = false;

  constructor(options: SseParserOptions) {
    this.#maxEventBytes = options.maxEventBytes;
  }

  /**
   * Feeds a chunk, which the parser may keep a view of until its line is complete (so it must not be reused);
   * returns the events it completed (usually zero or one). Throws SseEventTooLargeError.
   */
  push(chunk: Uint8Array | string): SseEvent[] {
    const bytes =
      typeof chunk === "string"
        ? Buffer.from(chunk)
        : Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#pendingCr && bytes.length > 0) {
      this.#pendingCr = false;
      if (bytes[0] === LF) start = 1;
    }
    // Next LF and next CR at or after `start`, each searched again only once passed: every byte is scanned
    // at most once per kind of line break.
    let lf = bytes.indexOf(LF, start);
    let cr = bytes.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const atCr = cr !== -1 && (lf === -1 || cr < lf);
      const end = atCr ? cr : lf;
      let next = end + 1;
      if (atCr) {
        if (next === bytes.length) this.#pendingCr = true;
        else if (bytes[next] === LF) next++; // CRLF
      }
      const event = this.#line(bytes, start, end, events);
      if (event !== undefined) events.push(event);
      start = next;
      if (lf !== -1 && lf < start) lf = bytes.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = bytes.indexOf(CR, start);
    }
    if (start < bytes.length) {
      const rest = bytes.length - start;
      this.#check(this.#partialBytes + rest, events);
      // A view, not a copy: a copy would double what a long line costs until the next garbage collection. Only
      // the first piece of a line can be a chunk's tail, so views keep at most one chunk's head alive needlessly.
      this.#partial.push(bytes.subarray(start));
      this.#partialBytes += rest;
    }
    return events;
  }

  /** End of stream: an unterminated event is discarded, as the SSE standard requires. */
  end(): void {
    this.#reset();
  }

  #reset(): void {
    this.#partial = [];
    this.#partialBytes = 0;
    this.#eventBytes = 0;
    this.#event = {};
    this.#hasFields = false;
  }

  /** Throws when the current event plus a line of `lineBytes` would pass the limit; the parser is then reset. */
  #check(lineBytes: number, completed: SseEvent[]): void {
    if (this.#eventBytes + lineBytes <= this.#maxEventBytes) return;
    this.#reset();
    throw new SseEventTooLargeError(this.#maxEventBytes, completed);
  }

  /** One complete line: the held pieces plus bytes[start, end). */
  #line(bytes: Buffer, start: number, end: number, completed: SseEvent[]): SseEvent | undefined {
    const lineBytes = this.#partialBytes + (end - start);
    this.#check(lineBytes, completed);
    let line: string;
    if (this.#partial.length === 0) {
      line = bytes.toString("utf8", start, end);
    } else {
      this.#partial.push(bytes.subarray(start, end));
      line = Buffer.concat(this.#partial, lineBytes).toString("utf8");
      this.#partial = [];
      this.#partialBytes = 0;
    }
    if (this.#firstLine) {
      this.#firstLine = false;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    return this.#interpret(line, lineBytes);
  }

  #interpret(line: string, lineBytes: number): SseEvent | undefined {
    if (line === "") {
      if (!this.#hasFields) return undefined;
      const event = this.#event;
      this.#event = {};
      this.#hasFields = false;
      this.#eventBytes = 0;
      return event;
    }
    const colon = line.indexOf(":");
    if (colon === 0) {
      if (this.#event.comments === undefined) this.#event.comments = [];
      this.#event.comments.push(line.slice(1));
      this.#keep(lineBytes);
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
    this.#keep(lineBytes);
    return undefined;
  }

  /** A line the event holds on to counts towards its size until the event is dispatched. */
  #keep(lineBytes: number): void {
    this.#hasFields = true;
    this.#eventBytes += lineBytes;
  }
}
