import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { getPriority } from "node:os";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { afterEach, describe, expect, test } from "vitest";
import { type ChainedAuditEvent, completeEvent } from "../../src/audit/audit-event.ts";
import { ExportProcess } from "../../src/audit/exporters/export-process.ts";
import type { ExporterSpec } from "../../src/audit/exporters/index.ts";
import { HashChain } from "../../src/audit/hash-chain.ts";
import { SinkWriteError } from "../../src/audit/sink.ts";
import { searchIndexExporterSchema } from "../../src/config/schema.ts";
import { SearchIndexReceiver } from "./receivers/search-index-receiver.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((thing) => thing.close()));
});

function exportProcess(
  niceness = 0,
  maxHeapMb?: number,
  onStarted?: (niceness: number | undefined) => void,
): ExportProcess {
  const started = new ExportProcess({ niceness, maxHeapMb, onStarted });
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

/** The niceness of each thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceness(pid: number | "self" = "self"): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  });
}

describe("the export process", () => {
  test("a sink's writes run in the child and reach the receiver as the same documents", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const exports = exportProcess();
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
    const exports = exportProcess();
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

  test("a spool's lines go as they are: one that does not parse is skipped and reported, what was not accepted comes back as events", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const unreadable: Array<[string, number]> = [];
    const exports = new ExportProcess({
      niceness: 0,
      onUnreadable: (sink, lines) => unreadable.push([sink, lines]),
    });
    open.push(exports);
    const sink = exports.sink(searchIndex({ url: es.url }));
    const batch = events(3);
    const line = (event: ChainedAuditEvent) => `${JSON.stringify(event)}\n`;
    const text = Buffer.from(
      `${line(batch[0] as ChainedAuditEvent)}{"torn":\n${batch.slice(1).map(line).join("")}`,
    );

    await sink.writeLines?.(text, 4);
    expect(es.received).toEqual(batch);
    expect(unreadable).toEqual([["search_index:es", 1]]);

    // The receiver refuses the third event it gets (the fourth line) for now: that event alone is to retry.
    es.failItemsNext((_, position) => (position === 2 ? 503 : undefined));
    const retry = await sink.writeLines?.(text, 4).catch((error: unknown) => error);
    expect(retry).toBeInstanceOf(SinkWriteError);
    expect((retry as SinkWriteError).remaining).toEqual([batch[2]]);
  });

  test("an exporter whose settings cannot make a client fails built(), naming it", async () => {
    const exports = exportProcess();
    exports.sink(searchIndex({ cloud_id: "no-colon-here" }));
    await expect(exports.built()).rejects.toThrow(/exporter search_index:es: .*cloud_id is not usable/);
  });

  test("a process that stops fails the writes in flight as retryable; the next write starts a new one with the sinks", async () => {
    const es = await SearchIndexReceiver.start();
    open.push(es);
    const exports = exportProcess(0, 48);
    const sink = exports.sink(searchIndex({ url: es.url }));
    await sink.write(events(1));
    // Parsed in the child, far more than its heap bound (a million and a half small arrays, 6 MB of JSON): V8 ends
    // the process (out of memory).
    const huge = [
      { ...(events(1)[0] as ChainedAuditEvent), extra: Array.from({ length: 1_500_000 }, () => [0]) },
    ];

    const failed = await sink.write(huge).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(SinkWriteError);
    expect((failed as SinkWriteError).permanent).toBe(false);
    expect((failed as SinkWriteError).message).toMatch(
      /the export process (failed|stopped|could not be reached)/,
    );

    const after = events(2);
    await sink.write(after);
    expect(es.received.slice(-2)).toEqual(after);
  });

  test.skipIf(process.platform !== "linux")(
    "every thread of the child runs at the niceness it is given (its collector threads too), the gateway at its own",
    async () => {
      // Whatever this process runs at (a CI runner may be niced itself); the child is 7 or, if already nicer, that.
      const own = getPriority();
      const expected = Math.max(own, 7);
      expect(threadNiceness().every((niceness) => niceness === own)).toBe(true);
      const es = await SearchIndexReceiver.start();
      open.push(es);
      const told: (number | undefined)[] = [];
      const exports = exportProcess(7, undefined, (niceness) => told.push(niceness));
      const sink = exports.sink(searchIndex({ url: es.url }));
      await sink.write(events(1));

      expect(exports.niceness).toBe(expected);
      expect(told).toEqual([expected]);
      const child = threadNiceness(exports.pid as number);
      // The main thread, V8's platform threads and libuv's pool at least.
      expect(child.length).toBeGreaterThan(4);
      expect(child.every((niceness) => niceness === expected)).toBe(true);
      expect(threadNiceness().every((niceness) => niceness === own)).toBe(true);
    },
  );

  test.skipIf(process.platform !== "linux" || !hasChrt())(
    "idle, every thread of the child runs under SCHED_IDLE; switched off, a new child runs under the normal policy",
    async () => {
      const es = await SearchIndexReceiver.start();
      open.push(es);
      const started: boolean[] = [];
      const exports = new ExportProcess({
        niceness: 5,
        idle: true,
        onStarted: (_, idle) => started.push(idle),
      });
      open.push(exports);
      const sink = exports.sink(searchIndex({ url: es.url }));
      await sink.write(events(1));
      const idleChild = exports.pid as number;
      expect(exports.idle).toBe(true);
      expect(threadPolicies(idleChild).every((policy) => policy === SCHED_IDLE)).toBe(true);

      exports.setIdle(false);
      const after = events(2);
      await sink.write(after);

      expect(exports.pid).not.toBe(idleChild);
      expect(exports.idle).toBe(false);
      expect(threadPolicies(exports.pid as number).every((policy) => policy === SCHED_OTHER)).toBe(true);
      expect(started).toEqual([true, false]);
      // The new child was given the sink again: the second write reached the receiver.
      expect(es.received.slice(-2)).toEqual(after);
    },
  );

  test("the child ends when the process that started it is gone, even SIGKILLed mid-write", {
    timeout: 30_000,
  }, async () => {
    // An index that takes the request and never answers: the child's write stays in flight (for its 120 s timeout),
    // which would keep it running if it did not end with its parent.
    // Reads (and drops) what comes, so a closed connection is seen and the server can close.
    const silent = createServer((socket) => socket.resume());
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    open.push({ close: () => new Promise<void>((resolve) => silent.close(() => resolve())) });
    const accepted = once(silent, "connection");
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    // A stand-in for the gateway: a process that starts an export process, writes one batch, says its pid, and waits.
    const module = new URL("../../src/audit/exporters/export-process.ts", import.meta.url).href;
    const spec: ExporterSpec = {
      kind: "search_index",
      name: "search_index:es",
      config: searchIndexExporterSchema.parse({ name: "es", url, timeout: 120 }),
    };
    const parent = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { ExportProcess } = await import(${JSON.stringify(module)});
         const exports = new ExportProcess({ niceness: 0 });
         const sink = exports.sink(${JSON.stringify(spec)});
         await exports.built();
         sink.write(${JSON.stringify(events(1))}).catch(() => {});
         console.log(exports.pid);
         setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const [line] = (await once(createInterface({ input: parent.stdout as Readable }), "line")) as [string];
    const child = Number(line);
    await accepted;
    expect(alive(child)).toBe(true);

    parent.kill("SIGKILL");

    await waitFor(() => !alive(child), 10_000);
  });
});

const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

/** The scheduling policy of each thread of a process (field 41 of /proc/<pid>/task/<tid>/stat). */
function threadPolicies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]);
  });
}

function hasChrt(): boolean {
  return spawnSync("chrt", ["--version"]).status === 0;
}

function alive(pid: number): boolean {
  try {
    // Exited but not yet reaped by whoever adopted it (a zombie, state Z in /proc/<pid>/stat) is gone too.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
