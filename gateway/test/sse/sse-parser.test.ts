import { describe, expect, test } from "vitest";
import {
  isJsonRpcRequest,
  isJsonRpcResponse,
  parseJsonRpcBody,
  parseJsonRpcEventData,
} from "../../src/sse/json-rpc.ts";
import { eventData, type SseEvent, serializeSseEvent } from "../../src/sse/sse-event.ts";
import { SseEventTooLargeError, SseParser } from "../../src/sse/sse-parser.ts";

const STREAM =
  ': ping\n\nid: 1_a\nretry: 3000\ndata: \n\nevent: message\nid: 2_a\ndata: {"jsonrpc":"2.0","id":7,"result":{"x":"é✓"}}\n\ndata: line one\ndata: line two\n\n';

/** Large enough for every stream these tests parse without testing the limit. */
const ROOMY = { maxEventBytes: 1024 * 1024 };

function parseAll(chunks: Array<string | Uint8Array>): SseEvent[] {
  const parser = new SseParser(ROOMY);
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe("SseParser", () => {
  test("parses comments, id, retry, event and multi-line data", () => {
    expect(parseAll([STREAM])).toEqual([
      { comments: [" ping"] },
      { id: "1_a", retry: 3000, data: [""] },
      { event: "message", id: "2_a", data: ['{"jsonrpc":"2.0","id":7,"result":{"x":"é✓"}}'] },
      { data: ["line one", "line two"] },
    ]);
  });

  test("gives the same events whatever the chunk boundaries, even inside UTF-8 sequences", () => {
    const bytes = new TextEncoder().encode(STREAM);
    const whole = parseAll([bytes]);
    for (let size = 1; size <= 7; size++) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      expect(parseAll(chunks), `chunk size ${size}`).toEqual(whole);
    }
  });

  test("accepts CRLF and lone CR line endings, including a CRLF split across chunks", () => {
    expect(parseAll(["data: a\r", "\n\r\ndata: b\r\r"])).toEqual([{ data: ["a"] }, { data: ["b"] }]);
  });

  test("an event is only emitted once its blank line arrives; an unterminated one is dropped at the end", () => {
    const parser = new SseParser(ROOMY);
    expect(parser.push("data: partial\n")).toEqual([]);
    expect(parser.push("\n")).toEqual([{ data: ["partial"] }]);
    expect(parser.push("data: never finished\n")).toEqual([]);
    parser.end();
    expect(parser.push("\n")).toEqual([]);
  });

  test("ignores unknown fields, non-numeric retry and ids containing NULL", () => {
    expect(parseAll(["foo: bar\nretry: soon\nid: a\u0000b\ndata: x\n\n"])).toEqual([{ data: ["x"] }]);
  });

  test("a field without a colon has an empty value", () => {
    expect(parseAll(["data\n\n"])).toEqual([{ data: [""] }]);
  });
});

describe("SseParser size bound", () => {
  const KIB16 = 16 * 1024;
  const LIMIT = 8 * 1024 * 1024;

  /** Which push threw (0-based) and what, or undefined when none did. */
  function feedUntilThrow(parser: SseParser, chunks: Iterable<Uint8Array | string>) {
    let index = 0;
    for (const chunk of chunks) {
      try {
        parser.push(chunk);
      } catch (error) {
        return { index, error };
      }
      index++;
    }
    return undefined;
  }

  function* longLine(totalBytes: number, chunkBytes: number): Generator<Uint8Array> {
    const chunk = new Uint8Array(chunkBytes).fill(0x61); // "a", never a line break
    yield new TextEncoder().encode("data: ");
    for (let sent = 0; sent < totalBytes; sent += chunkBytes) yield chunk;
  }

  test("a 20 MB line without a line break, in 16 KiB chunks, is refused by the chunk that passes the limit", () => {
    const parser = new SseParser({ maxEventBytes: LIMIT });
    const outcome = feedUntilThrow(parser, longLine(20 * 1024 * 1024, KIB16));
    expect(outcome?.error).toBeInstanceOf(SseEventTooLargeError);
    expect(outcome?.error).toMatchObject({
      limit: LIMIT,
      message: `SSE event exceeds the limit of ${LIMIT} bytes`,
    });
    // "data: " (6 bytes), then 512 chunks make 8 MiB + 6: the 512th 16 KiB chunk (push 512) passes the limit.
    expect(outcome?.index).toBe(LIMIT / KIB16);
  });

  test("an event of exactly the limit passes, one byte more does not; line breaks are not counted", () => {
    const first = `data: ${"x".repeat(50)}`; // 56 bytes
    const second = "data: y"; // 7 bytes
    const stream = `${first}\r\n${second}\n\n`;
    expect(new SseParser({ maxEventBytes: 63 }).push(stream)).toEqual([{ data: ["x".repeat(50), "y"] }]);
    expect(() => new SseParser({ maxEventBytes: 62 }).push(stream)).toThrow(SseEventTooLargeError);
  });

  test("everything an event keeps counts: an endless run of comments without a blank line is refused", () => {
    const parser = new SseParser({ maxEventBytes: 1000 });
    const outcome = feedUntilThrow(
      parser,
      (function* () {
        for (let i = 0; i < 10_000; i++) yield ": keep-alive\n";
      })(),
    );
    // 12 bytes per comment line: the 84th (index 83) makes 1008 > 1000.
    expect(outcome?.index).toBe(83);
  });

  test("the count starts again with each event, so a long stream of events within the limit flows", () => {
    const parser = new SseParser({ maxEventBytes: 100 });
    let events = 0;
    for (let i = 0; i < 1000; i++) events += parser.push(`id: ${i}\ndata: ${"z".repeat(80)}\n\n`).length;
    expect(events).toBe(1000);
  });

  test("events the same chunk completed before the limit was passed come with the error, whole", () => {
    const parser = new SseParser({ maxEventBytes: 20 });
    let error: unknown;
    try {
      parser.push(`data: one\n\ndata: two\n\ndata: ${"3".repeat(30)}`);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SseEventTooLargeError);
    expect((error as SseEventTooLargeError).completed).toEqual([{ data: ["one"] }, { data: ["two"] }]);
  });

  test("a long line split across many chunks is joined once, intact, including split UTF-8 sequences", () => {
    const text = "é✓".repeat(100_000); // 500,000 bytes
    const bytes = new TextEncoder().encode(`data: ${text}\n\n`);
    const parser = new SseParser({ maxEventBytes: bytes.length });
    const events: SseEvent[] = [];
    for (let i = 0; i < bytes.length; i += 4097) events.push(...parser.push(bytes.subarray(i, i + 4097)));
    expect(events).toEqual([{ data: [text] }]);
  });

  test("a byte order mark at the start of the stream is dropped, even split across chunks", () => {
    const parser = new SseParser(ROOMY);
    expect(parser.push(new Uint8Array([0xef, 0xbb]))).toEqual([]);
    expect(parser.push(new Uint8Array([0xbf, ...new TextEncoder().encode("data: a\n\n")]))).toEqual([
      { data: ["a"] },
    ]);
  });
});

describe("serializeSseEvent", () => {
  test("round-trips every event of a stream, keeping id and retry", () => {
    const events = parseAll([STREAM]);
    const again = parseAll([events.map(serializeSseEvent).join("")]);
    expect(again).toEqual(events);
    expect(serializeSseEvent({ id: "9", retry: 10, data: [""] })).toBe("id: 9\nretry: 10\ndata: \n\n");
  });

  test("eventData joins data lines with newlines", () => {
    expect(eventData({ data: ["a", "b"] })).toBe("a\nb");
    expect(eventData({ id: "1" })).toBeUndefined();
  });
});

describe("JSON-RPC helpers", () => {
  test("classifies requests, notifications and responses", () => {
    expect(isJsonRpcRequest({ jsonrpc: "2.0", id: 1, method: "ping" })).toBe(true);
    expect(isJsonRpcRequest({ jsonrpc: "2.0", method: "notifications/initialized" })).toBe(false);
    expect(isJsonRpcResponse({ jsonrpc: "2.0", id: 1, result: {} })).toBe(true);
    expect(isJsonRpcResponse({ jsonrpc: "2.0", id: "a", error: { code: 1, message: "x" } })).toBe(true);
    expect(isJsonRpcResponse({ jsonrpc: "2.0", id: 1, method: "ping" })).toBe(false);
  });

  test("parses single messages and batches, and explains what is wrong otherwise", () => {
    expect(parseJsonRpcBody('{"jsonrpc":"2.0","id":1,"method":"ping"}')).toMatchObject({
      ok: true,
      batch: false,
    });
    expect(
      parseJsonRpcBody('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]'),
    ).toMatchObject({
      ok: true,
      batch: true,
    });
    expect(parseJsonRpcBody("[]")).toMatchObject({ ok: false, reason: "invalid_request" });
    expect(parseJsonRpcBody("[1]")).toMatchObject({ ok: false, reason: "invalid_request" });
    expect(parseJsonRpcBody("42")).toMatchObject({ ok: false, reason: "invalid_request" });
    expect(parseJsonRpcBody("{")).toMatchObject({ ok: false, reason: "invalid_json" });
  });

  test("event data that is not a JSON-RPC object is left alone", () => {
    expect(parseJsonRpcEventData("")).toBeUndefined();
    expect(parseJsonRpcEventData("not json")).toBeUndefined();
    expect(parseJsonRpcEventData('{"jsonrpc":"2.0","id":1,"result":{}}')).toMatchObject({ id: 1 });
  });
});
