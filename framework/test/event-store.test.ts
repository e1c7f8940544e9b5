// The resumability store: bounded, replays one stream's later events, and never another session's.
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../src/runtime/event-store.ts";

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: "2.0",
  method: "notifications/message",
  params: { n },
});

async function replay(store: ReturnType<MemoryEventStore["forSession"]>, lastEventId: string) {
  const sent: [string, JSONRPCMessage][] = [];
  const streamId = await store.replayEventsAfter(lastEventId, {
    send: async (id, message) => {
      sent.push([id, message]);
    },
  });
  return { streamId, sent };
}

describe("MemoryEventStore", () => {
  it("replays the events after the given id on the same stream only", async () => {
    const session = new MemoryEventStore().forSession();
    const first = await session.storeEvent("s1", note(1));
    await session.storeEvent("s2", note(2));
    const third = await session.storeEvent("s1", note(3));
    expect(await session.getStreamIdForEventId?.(first)).toBe("s1");
    const { streamId, sent } = await replay(session, first);
    expect(streamId).toBe("s1");
    expect(sent).toEqual([[third, note(3)]]);
  });

  it("keeps one session's events from another session with the same stream id", async () => {
    const store = new MemoryEventStore();
    const a = store.forSession();
    const b = store.forSession();
    const aFirst = await a.storeEvent("_GET_stream", note(1));
    await a.storeEvent("_GET_stream", note(2));
    const bFirst = await b.storeEvent("_GET_stream", note(3));
    expect(await b.getStreamIdForEventId?.(aFirst)).toBeUndefined();
    await expect(replay(b, aFirst)).rejects.toThrow(/unknown event id/);
    expect((await replay(b, bFirst)).sent).toEqual([]);
    expect((await replay(a, aFirst)).sent.map(([, m]) => m)).toEqual([note(2)]);
  });

  it("forgets the oldest events beyond its limit and rejects ids it never issued", async () => {
    const session = new MemoryEventStore(3).forSession();
    const ids = [];
    for (let n = 1; n <= 5; n++) ids.push(await session.storeEvent("s", note(n)));
    expect(await session.getStreamIdForEventId?.(ids[1] as string)).toBeUndefined();
    expect((await replay(session, ids[2] as string)).sent.map(([, m]) => m)).toEqual([note(4), note(5)]);
    for (const bogus of ["s_99", "s_-1", "s_x", "nounderscore", ""])
      expect(await session.getStreamIdForEventId?.(bogus)).toBeUndefined();
  });
});
