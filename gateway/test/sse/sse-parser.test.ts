import { describe, expect, test } from "vitest";
import {
  isJsonRpcRequest,
  isJsonRpcResponse,
  parseJsonRpcBody,
  parseJsonRpcEventData,
} from "../../src/sse/json-rpc.ts";
import { eventData, type SseEvent, serializeSseEvent } from "../../src/sse/sse-event.ts";
import { SseParser } from "../../src/sse/sse-parser.ts";

const STREAM =
  ': ping\n\nid: 1_a\nretry: 3000\ndata: \n\nevent: message\nid: 2_a\ndata: {"jsonrpc":"2.0","id":7,"result":{"x":"é✓"}}\n\ndata: line one\ndata: line two\n\n';

function parseAll(chunks: Array<string | Uint8Array>): SseEvent[] {
  const parser = new SseParser();
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
    const parser = new SseParser();
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
