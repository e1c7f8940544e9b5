// The inspector seat on its own: keep, replace and refuse, on requests, on a JSON answer parsed once, and per SSE event.
import { describe, expect, test } from "vitest";
import { GatewayError } from "../../src/errors/gateway-error.ts";
import {
  inspectRequest,
  KEEP,
  type MessageInspector,
  responseInspection,
} from "../../src/inspect/inspector.ts";
import { newRequestRecord } from "../../src/inspect/request-record.ts";
import type { JsonRpcMessage } from "../../src/sse/json-rpc.ts";

const record = newRequestRecord("req-1", "POST", "127.0.0.1");
// The POST these answers answer: requests 1 to 3.
record.messages = [1, 2, 3].map((id) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "x" },
}));

/** Upper-cases every text result, refuses anything mentioning "forbidden", counts what it saw. */
function shouting(seen: JsonRpcMessage[] = []): MessageInspector {
  return {
    name: "shouting",
    inspect(_record, message) {
      seen.push(message);
      const text = JSON.stringify(message);
      if (text.includes("forbidden"))
        return { action: "refuse", error: new GatewayError("capability_forbidden", "no") };
      const result = message.result as { text?: string } | undefined;
      if (typeof result?.text === "string") {
        return { action: "replace", message: { ...message, result: { text: result.text.toUpperCase() } } };
      }
      return KEEP;
    },
  };
}

describe("request inspectors", () => {
  test("run in order on every message; a replacement is what the next inspector sees", async () => {
    const order: string[] = [];
    const first: MessageInspector = {
      name: "first",
      inspect: (_r, message) => {
        order.push(`first:${String(message.id)}`);
        return { action: "replace", message: { ...message, params: { replaced: true } } };
      },
    };
    const second: MessageInspector = {
      name: "second",
      inspect: (_r, message) => {
        order.push(`second:${JSON.stringify(message.params)}`);
        return KEEP;
      },
    };
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: {} },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: {} },
    ];
    const out = await inspectRequest([first, second], record, messages);
    expect(out.changed).toBe(true);
    expect(out.messages.map((m) => m.params)).toEqual([{ replaced: true }, { replaced: true }]);
    expect(order).toEqual(["first:1", 'second:{"replaced":true}', "first:2", 'second:{"replaced":true}']);
  });

  test("nothing replaced: unchanged (the client's bytes go upstream); a refusal throws its error", async () => {
    const messages = [{ jsonrpc: "2.0", id: 1, method: "ping" }];
    expect(await inspectRequest([shouting()], record, messages)).toEqual({ messages, changed: false });
    expect(() =>
      inspectRequest([shouting()], record, [
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "forbidden" } },
      ]),
    ).toThrow(expect.objectContaining({ code: "capability_forbidden" }));
  });
});

describe("response inspection", () => {
  test("no inspectors: no inspection at all (the answer passes byte for byte)", () => {
    expect(responseInspection([], record)).toBeUndefined();
  });

  test("a JSON answer is parsed once for all inspectors, rewritten only when a message changed", async () => {
    const seen: JsonRpcMessage[] = [];
    const inspection = responseInspection([shouting(seen), shouting(seen)], record);
    const untouched = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { other: 1 } }));
    expect(await inspection?.json(untouched)).toBe(untouched);
    const batch = Buffer.from(
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, result: { text: "hello" } },
        { jsonrpc: "2.0", id: 2, result: { text: "forbidden" } },
        { jsonrpc: "2.0", method: "notifications/message", params: { data: "forbidden" } },
      ]),
    );
    const out = JSON.parse((await inspection?.json(batch))?.toString() ?? "null") as JsonRpcMessage[];
    // Replaced; refused answer → a JSON-RPC error for its id; refused notification → dropped.
    expect(out).toEqual([
      { jsonrpc: "2.0", id: 1, result: { text: "HELLO" } },
      {
        jsonrpc: "2.0",
        id: 2,
        error: expect.objectContaining({
          code: -32043,
          data: expect.objectContaining({ request_id: "req-1" }),
        }),
      },
    ]);
    expect(() => inspection?.json(Buffer.from("not json"))).toThrow(
      expect.objectContaining({ code: "upstream_uninspectable" }),
    );
  });

  test("SSE: each event on its own; a dropped message keeps its event id for resumption", async () => {
    const inspection = responseInspection([shouting()], record);
    const event = { id: "7", data: ['{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}'] };
    const replaced = await inspection?.sse(event, { jsonrpc: "2.0", id: 1, result: { text: "hi" } });
    expect(replaced).toEqual({ id: "7", data: ['{"jsonrpc":"2.0","id":1,"result":{"text":"HI"}}'] });
    // A comment still keeps the stream alive, but none of the upstream's text goes with it.
    expect(await inspection?.sse({ comments: [" keep-alive"] }, undefined)).toEqual({ comments: [""] });
    const priming = { id: "p", data: [""] };
    expect(await inspection?.sse(priming, undefined)).toBe(priming);
    const notification = { jsonrpc: "2.0", method: "notifications/message", params: { data: "forbidden" } };
    expect(await inspection?.sse({ id: "8", data: [JSON.stringify(notification)] }, notification)).toEqual({
      id: "8",
    });
    expect(await inspection?.sse({ data: [JSON.stringify(notification)] }, notification)).toBeUndefined();
  });

  test("an inspector that answers with a promise: the same outcome, in order, once it settles", async () => {
    const later: MessageInspector = {
      name: "later",
      inspect: async (r, message) => shouting().inspect(r, message),
    };
    const inspection = responseInspection([later, shouting()], record);
    const batch = Buffer.from(
      JSON.stringify([
        { jsonrpc: "2.0", id: 1, result: { text: "hello" } },
        { jsonrpc: "2.0", id: 2, result: { text: "forbidden" } },
      ]),
    );
    const pending = inspection?.json(batch);
    expect(pending).toBeInstanceOf(Promise);
    const out = JSON.parse((await pending)?.toString() ?? "null") as JsonRpcMessage[];
    expect(out[0]).toEqual({ jsonrpc: "2.0", id: 1, result: { text: "HELLO" } });
    expect(out[1]).toMatchObject({ id: 2, error: { code: -32043 } });
    const request = inspectRequest([later], record, [
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "forbidden" } },
    ]);
    await expect(request).rejects.toMatchObject({ code: "capability_forbidden" });
  });
});

describe("the relay's invariant: nothing passes that no inspector saw", () => {
  const seenBy = () => {
    const seen: JsonRpcMessage[] = [];
    return { seen, inspection: responseInspection([shouting(seen)], record) };
  };

  test("an answer whose id reads as a pending request's (\"2\" for 2) is that request's: attributed, id made exact", async () => {
    const { seen, inspection } = seenBy();
    const out = await inspection?.json(Buffer.from('{"jsonrpc":"2.0","id":"2","result":{"text":"hi"}}'));
    expect(JSON.parse(out?.toString() ?? "")).toEqual({ jsonrpc: "2.0", id: 2, result: { text: "HI" } });
    expect(seen[0]?.id).toBe(2);
  });

  test("on a POST, an answer to none of its requests is withheld and put on record", async () => {
    const withheld: unknown[] = [];
    const inspection = responseInspection([shouting()], record, {
      onWithheld: (_r, what) => withheld.push(what),
    });
    expect(() => inspection?.json(Buffer.from('{"jsonrpc":"2.0","id":9,"result":{"text":"x"}}'))).toThrow(
      expect.objectContaining({ code: "upstream_uninspectable" }),
    );
    const event = { id: "e", data: ['{"jsonrpc":"2.0","id":9,"result":{}}'] };
    expect(await inspection?.sse(event, { jsonrpc: "2.0", id: 9, result: {} })).toEqual({ id: "e" });
    expect(withheld).toContainEqual({ inspector: "relay", reason: "unattributable", method: undefined });
  });

  test("an error answer with id null concerns the whole request: inspected and passed", async () => {
    const { seen, inspection } = seenBy();
    const body = Buffer.from(
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}',
    );
    expect(await inspection?.json(body)).toBe(body);
    expect(seen).toHaveLength(1);
  });

  test("a byte order mark is dropped, as a client's decoder drops it, and the message inspected", async () => {
    const { seen, inspection } = seenBy();
    const body = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}'),
    ]);
    expect((await inspection?.json(body))?.toString()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    expect(seen).toHaveLength(1);
  });

  test("JSON that is no JSON-RPC message is refused, never passed", () => {
    const { inspection } = seenBy();
    for (const body of ['"text"', "[]", "[1]", "42"]) {
      expect(() => inspection?.json(Buffer.from(body)), body).toThrow(
        expect.objectContaining({ code: "upstream_uninspectable" }),
      );
    }
  });

  test("SSE data a POST stream cannot read ends the stream; on a GET stream its data is dropped, its id kept", async () => {
    const { inspection } = seenBy();
    expect(() => inspection?.sse({ id: "1", data: ["<html>"] }, undefined)).toThrow(
      expect.objectContaining({ code: "upstream_uninspectable" }),
    );
    const get = newRequestRecord("req-2", "GET", "127.0.0.1");
    const onGet = responseInspection([shouting()], get);
    expect(await onGet?.sse({ id: "1", data: ["<html>"] }, undefined)).toEqual({ id: "1" });
  });

  test("events of another type than message keep their id, not their data", async () => {
    const { seen, inspection } = seenBy();
    expect(
      await inspection?.sse({ id: "4", event: "other", data: ['{"text":"x"}'] }, { result: {} }),
    ).toEqual({
      id: "4",
    });
    expect(seen).toHaveLength(0);
  });

  test("on a GET stream (a resumption replays earlier answers) an answer of unknown request is inspected", async () => {
    const seen: JsonRpcMessage[] = [];
    const get = newRequestRecord("req-3", "GET", "127.0.0.1");
    const inspection = responseInspection([shouting(seen)], get);
    const message = { jsonrpc: "2.0", id: 5, result: { text: "replayed" } };
    expect(await inspection?.sse({ id: "9", data: [JSON.stringify(message)] }, message)).toEqual({
      id: "9",
      data: ['{"jsonrpc":"2.0","id":5,"result":{"text":"REPLAYED"}}'],
    });
    expect(seen).toEqual([message]);
  });
});
