import { readdirSync, readFileSync } from "node:fs";
import { getPriority } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import { type ChainedAuditEvent, completeEvent } from "../../src/audit/audit-event.ts";
import { ExportThread } from "../../src/audit/exporters/export-thread.ts";
import type { ExporterSpec } from "../../src/audit/exporters/index.ts";
import { HashChain } from "../../src/audit/hash-chain.ts";
import { SinkWriteError } from "../../src/audit/sink.ts";
import { searchIndexExporterSchema } from "../../src/config/schema.ts";
import { SearchIndexReceiver } from "./receivers/search-index-receiver.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((thing) => thing.close()));
});

function thread(
  niceness = 0,
  maxHeapMb?: number,
  onStarted?: (niceness: number | undefined) => void,
): ExportThread {
  const started = new ExportThread({ niceness, maxHeapMb, onStarted });
  open.push(started);
  return started;
}

function searchIndex(fields: Record<string, unknown>): ExporterSpec {
  const config = searchIndexExporterSchema.parse({ name: "es", ...fields });
  return { kind: "search_index", name: "search_index:es", config };
}

function events(count: number): ChainedAuditEvent[] {
  const chain = new HashChain("gw-1");
  return Array.from({ length: count }, (_, i) =>
    chain.link(
      completeEvent(
        { kind: "call_completed", request_id: `r${i}`, status: 200, time: "2026-11-25T10:00:00Z" },
        "gw",
      ),
    ),
  );
}

/** The niceness of each thread of this process (field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): number[] {
  return readdirSync("/proc/self/task").map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  });
}

describe("the export thread", () => {
  test("a sink's writes run in the thread and reach the receiver as the same documents", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const exports = thread();
    const sink = exports.sink(searchIndex({ url: es.url }));
    await exports.built();
    const batch = events(3);

    await sink.write(batch);

    expect(sink.name).toBe("search_index:es");
    expect(es.received).toEqual(batch);
  });

  test("what the receiver did not accept comes back as the caller's own events, retryable or refused for good", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const exports = thread();
    const sink = exports.sink(searchIndex({ url: es.url }));
    const batch = events(5);

    es.failItemsNext((_, position) => (position === 1 ? 429 : position === 3 ? 503 : undefined));
    const retry = await sink.write(batch).catch((error: unknown) => error);
    expect(retry).toBeInstanceOf(SinkWriteError);
    expect((retry as SinkWriteError).permanent).toBe(false);
    // The very objects of the batch (by identity), so the queue resends exactly those.
    expect((retry as SinkWriteError).remaining?.[0]).toBe(batch[1]);
    expect((retry as SinkWriteError).remaining?.[1]).toBe(batch[3]);
    expect((retry as SinkWriteError).message).toContain("2 of 5 events not accepted, to retry");

    es.failItemsNext((_, position) => (position === 0 ? 400 : undefined));
    const refused = await sink.write(batch.slice(1, 3)).catch((error: unknown) => error);
    expect((refused as SinkWriteError).permanent).toBe(true);
    expect((refused as SinkWriteError).remaining).toEqual([batch[1]]);
  });

  test("an exporter whose settings cannot make a client fails built(), naming it", async () => {
    const exports = thread();
    exports.sink(searchIndex({ cloud_id: "no-colon-here" }));
    await expect(exports.built()).rejects.toThrow(/exporter search_index:es: .*cloud_id is not usable/);
  });

  test("a thread that stops fails the writes in flight as retryable; the next write starts a new one with the sinks", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const exports = thread(0, 48);
    const sink = exports.sink(searchIndex({ url: es.url }));
    await sink.write(events(1));
    // Far more than the thread's heap bound: V8 stops the thread (ERR_WORKER_OUT_OF_MEMORY).
    const huge = Array.from({ length: 8 }, () => ({
      ...(events(1)[0] as ChainedAuditEvent),
      reason: "x".repeat(16 << 20),
    }));

    const failed = await sink.write(huge).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SinkWriteError);
    expect((failed as SinkWriteError).permanent).toBe(false);
    expect((failed as SinkWriteError).message).toMatch(/the export thread (failed|stopped)/);

    const after = events(2);
    await sink.write(after);
    expect(es.received.slice(-2)).toEqual(after);
  });

  test.skipIf(process.platform !== "linux")(
    "the thread runs at the niceness it is given, the rest of the process at its own",
    async () => {
      // Whatever this process runs at (a CI runner may be niced itself); the thread is 7 or, if already nicer, that.
      const own = getPriority();
      const expected = Math.max(own, 7);
      expect(threadNiceness().every((niceness) => niceness === own)).toBe(true);
      const es = await SearchIndexReceiver.start();
      open.push(es);
      const told: (number | undefined)[] = [];
      const exports = thread(7, undefined, (niceness) => told.push(niceness));
      const sink = exports.sink(searchIndex({ url: es.url }));
      await sink.write(events(1));

      expect(exports.niceness).toBe(expected);
      expect(told).toEqual([expected]);
      if (expected !== own) {
        const after = threadNiceness();
        expect(after.filter((niceness) => niceness === expected)).toHaveLength(1);
        expect(after.filter((niceness) => niceness !== expected).every((niceness) => niceness === own)).toBe(
          true,
        );
      }
    },
  );
});
