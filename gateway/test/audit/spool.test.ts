// The on-disk spool of exporter sinks: replayed in order after a restart (also after SIGKILL of a real process),
// bounded by its byte cap (drops counted, recorded and reported), and only cut after the sink accepted a batch.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import type { ChainedAuditEvent } from "../../src/audit/audit-event.ts";
import { AuditLog, type AuditLogOptions } from "../../src/audit/audit-log.ts";
import { parsedLines } from "../../src/audit/event-json.ts";
import { Spool } from "../../src/audit/spool.ts";
import { range, seqs, TestSink, waitFor } from "./support/test-sink.ts";

const fail = (error: unknown) => {
  throw error;
};
/** A chained event as far as a spool cares: its identity and sequence. */
const event = (seq: number) =>
  ({ instance: "i", seq, hash: `h${seq}`, kind: "call_completed" }) as ChainedAuditEvent;
const CHILD = fileURLToPath(new URL("./support/spooling-child.ts", import.meta.url));

const dirs: string[] = [];
const logs: AuditLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close(0);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function spoolDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "svc-spool-"));
  dirs.push(dir);
  return dir;
}

function auditLog(options: Partial<AuditLogOptions> & Pick<AuditLogOptions, "sinks" | "spool">): AuditLog {
  const log = new AuditLog({ gateway: "gw", retryDelayMs: 1, retryCapMs: 5, lingerMs: 0, ...options });
  logs.push(log);
  return log;
}

function record(log: AuditLog, count: number): void {
  for (let i = 0; i < count; i++) log.record({ kind: "call_completed", request_id: `r${i}` });
}

/** Complete lines in a sink's segment files: what a SIGKILL cannot take back. */
async function spooledLines(dir: string): Promise<number> {
  let lines = 0;
  for (const name of await readdir(dir).catch(() => [])) {
    if (!name.endsWith(".jsonl") || name.startsWith("dead")) continue;
    const text = await readFile(join(dir, name), "utf8");
    lines += text.split("\n").length - 1;
  }
  return lines;
}

describe("spool", () => {
  test("a restarted audit log replays the spool first, in order, then new events", async () => {
    const dir = await spoolDir();
    const down = new TestSink("otel:collector").down();
    const first = auditLog({ sinks: [down], spool: { dir, maxBytes: 1 << 20 } });
    record(first, 30);
    await waitFor(() => expect(down.attempts.length).toBeGreaterThan(0));
    await first.close(0);
    expect(down.received).toEqual([]);

    const up = new TestSink("otel:collector");
    const second = auditLog({ sinks: [up], spool: { dir, maxBytes: 1 << 20 } });
    expect(second.instance).not.toBe(first.instance);
    record(second, 5);
    await second.drain();
    const key = (event: ChainedAuditEvent) =>
      `${event.instance === first.instance ? "first" : "second"}:${event.seq}`;
    expect(up.received.map(key)).toEqual([
      ...range(0, 30).map((seq) => `first:${seq}`),
      ...range(0, 5).map((seq) => `second:${seq}`),
    ]);
    // Delivered means gone: a third start has nothing to replay.
    await second.close(0);
    const third = new TestSink("otel:collector");
    const log = auditLog({ sinks: [third], spool: { dir, maxBytes: 1 << 20 } });
    await log.drain();
    expect(third.received).toEqual([]);
    expect(log.sinkStatus()[0]).toMatchObject({ backlogEvents: 0, backlogBytes: 0 });
  });

  test("small segments: replay crosses segment files and finished ones are deleted", async () => {
    const dir = await spoolDir();
    const down = new TestSink("siem:s").down();
    // Segments of 2 KiB: a few events each, however the appends are grouped into writes.
    const first = auditLog({
      sinks: [down],
      spool: { dir, maxBytes: 64 << 10, segmentBytes: 2048 },
      batchSize: 5,
    });
    for (let round = 0; round < 8; round++) {
      record(first, 5);
      await waitFor(() => expect(first.sinkStatus()[0]?.backlogEvents).toBe((round + 1) * 5));
    }
    await first.close(0);
    const sinkDir = join(dir, "siem%3As");
    expect((await readdir(sinkDir)).filter((name) => name.endsWith(".jsonl")).length).toBeGreaterThan(1);
    const up = new TestSink("siem:s");
    const second = auditLog({
      sinks: [up],
      spool: { dir, maxBytes: 64 << 10, segmentBytes: 2048 },
      batchSize: 7,
    });
    await second.drain();
    expect(seqs(up.received)).toEqual(range(0, 40));
    await second.close(0);
    expect(await spooledLines(sinkDir)).toBe(0);
  });

  test("at the cap new events for that sink are dropped, counted, reported and recorded; the others get all", async () => {
    const dir = await spoolDir();
    const full = new TestSink("search_index:full").down();
    const other = new TestSink("stdout");
    const dropped: number[] = [];
    const log = auditLog({
      sinks: [full, other],
      spool: { dir, maxBytes: 4096 },
      onDropped: (_sink, count) => dropped.push(count),
    });
    record(log, 40);
    await waitFor(() => expect(other.received.length).toBeGreaterThanOrEqual(41));
    const status = log.sinkStatus().find((sink) => sink.name === "search_index:full");
    expect(status?.state).toBe("spool_full");
    expect(status?.backlogBytes).toBeLessThanOrEqual(4096);
    const droppedTotal = dropped.reduce((sum, count) => sum + count, 0);
    expect(status?.dropped).toBe(droppedTotal);
    expect(droppedTotal).toBeGreaterThan(0);
    const notice = other.received.find((event) => event.kind === "events_dropped");
    expect(notice?.reason).toMatch(/dropped for sink search_index:full: its backlog is at its cap/);

    full.up();
    await log.drain();
    // Accepting again: the total of the streak goes on the record, and the sink is ok again.
    record(log, 1);
    await log.drain();
    const summary = other.received.filter((event) => event.kind === "events_dropped").at(-1);
    expect(summary?.reason).toMatch(
      /audit events were dropped for sink search_index:full while its backlog was at/,
    );
    expect(summary?.count).toBe(droppedTotal);
    expect(log.sinkStatus().find((sink) => sink.name === "search_index:full")?.state).toBe("ok");
    // What the full sink got plus what it lost is everything recorded.
    expect(full.received.length + droppedTotal).toBe(other.received.length);
  });

  test("an unusable spool directory: the error names it, its events are counted as dropped, health says so", async () => {
    const dir = await spoolDir();
    await writeFile(join(dir, "search_index%3Aes"), "a file where the sink's directory should be");
    const errors: unknown[] = [];
    const dropped: number[] = [];
    const sink = new TestSink("search_index:es");
    const log = auditLog({
      sinks: [sink],
      spool: { dir, maxBytes: 1 << 20 },
      onSinkError: (error) => errors.push(error),
      onDropped: (_sink, count) => dropped.push(count),
    });
    record(log, 3);
    await waitFor(() => expect(errors).toHaveLength(1));
    expect(String(errors[0])).toMatch(
      /audit spool directory '.*search_index%3Aes' cannot be used \(SVC_AUDIT_SPOOL_DIR\)/,
    );
    record(log, 2);
    await log.drain();
    // 3 + the events_dropped notice about them + 2.
    expect(log.sinkStatus()[0]).toMatchObject({ state: "spool_full", dropped: 6 });
    expect(dropped.reduce((sum, count) => sum + count, 0)).toBe(6);
    expect(sink.received).toEqual([]);
  });

  test("survives SIGKILL of a real process: every complete line on disk is replayed, in chain order", async () => {
    const dir = await spoolDir();
    const child = spawn(process.execPath, [CHILD, dir], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const [instance] = (await once(createInterface({ input: child.stdout }), "line")) as [string];
      const sinkDir = join(dir, "search_index%3Adown");
      await waitFor(async () => expect(await spooledLines(sinkDir)).toBeGreaterThanOrEqual(2000), {
        timeout: 30_000,
        interval: 50,
      });
      child.kill("SIGKILL");
      await once(child, "exit");
      // As if the machine had crashed mid-write: a torn last line is cut off, not delivered half.
      const segments = (await readdir(sinkDir)).filter((name) => /^\d+\.jsonl$/.test(name)).sort();
      await appendFile(join(sinkDir, segments.at(-1) as string), '{"kind":"call_comp');
      const onDisk = await spooledLines(sinkDir);

      const up = new TestSink("search_index:down");
      const log = auditLog({ sinks: [up], spool: { dir, maxBytes: 64 << 20 } });
      await log.drain();
      expect(up.received.every((event) => event.instance === instance)).toBe(true);
      expect(seqs(up.received)).toEqual(range(0, onDisk));
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});

test("appends that share a group commit keep their order, and close() writes the ones still waiting for it", async () => {
  const dir = await spoolDir();
  const spool = new Spool({ dir, maxBytes: 1 << 20 });
  await spool.ready();
  // 50 separate appends (50 background flushes) inside one group-commit window, closed before it ends.
  for (let seq = 0; seq < 50; seq++) expect(spool.append([event(seq)])).toBe(1);
  await spool.close();
  expect(await spooledLines(dir)).toBe(50);
  const reopened = new Spool({ dir, maxBytes: 1 << 20 });
  await reopened.ready();
  const batch = await reopened.read(100);
  await reopened.close();
  expect(seqs(parsedLines(batch.text, fail))).toEqual(range(0, 50));
});

test("the cursor is saved on close and within a second of an ack; a spool left without close replays from the saved cursor", async () => {
  const dir = await spoolDir();
  const replay = async (spool: Spool) => seqs(parsedLines((await spool.read(1000)).text, fail));
  /** What a start after a crash now (no close) would send first. */
  const replayAfterCrash = async () => {
    const crashed = new Spool({ dir, maxBytes: 1 << 20 });
    await crashed.ready();
    const replayed = await replay(crashed);
    await crashed.close();
    return replayed;
  };
  const spool = new Spool({ dir, maxBytes: 1 << 20 });
  await spool.ready();
  spool.append(range(0, 20).map(event));
  await waitFor(() => expect(spool.pendingEvents).toBe(0));
  await spool.ack(await spool.read(8));
  // Within one segment the cursor is saved by its timer, not per ack; no close needed for a crash to resume there.
  await spool.ack(await spool.read(5));
  await waitFor(async () => expect(await replayAfterCrash()).toEqual(range(13, 20)), { interval: 100 });
  await spool.ack(await spool.read(3));
  // At least once: whether or not this ack was saved yet, nothing not accepted is skipped.
  expect((await replayAfterCrash()).slice(-4)).toEqual(range(16, 20));
  // close() saves the cursor: the next start replays exactly what was not accepted.
  await spool.close();
  const reopened = new Spool({ dir, maxBytes: 1 << 20 });
  await reopened.ready();
  expect(await replay(reopened)).toEqual(range(16, 20));
  await reopened.close();
});

test("a batch read back is the lines as written: across appends, up to the batch size, from memory or from disk alike", async () => {
  const dir = await spoolDir();
  const spool = new Spool({ dir, maxBytes: 1 << 20 });
  await spool.ready();
  // Three separate writes (each waits for the one before): a batch may span them.
  for (const [from, to] of [
    [0, 3],
    [3, 4],
    [4, 9],
  ] as const) {
    spool.append(range(from, to).map(event));
    await waitFor(() => expect(spool.pendingEvents).toBe(0));
  }
  const segments = (await readdir(dir)).filter((name) => name.endsWith(".jsonl"));
  expect(segments.length).toBe(1);
  const written = await readFile(join(dir, segments[0] as string));
  const texts: string[] = [];
  for (;;) {
    const batch = await spool.read(4);
    if (batch.lines === 0) break;
    expect(batch.text.toString().split("\n").length - 1).toBe(batch.lines);
    texts.push(batch.text.toString());
    await spool.ack(batch);
  }
  expect(texts.map((text) => seqs(parsedLines(Buffer.from(text), fail)))).toEqual([
    [0, 1, 2, 3],
    [4, 5, 6, 7],
    [8],
  ]);
  expect(texts.join("")).toBe(written.toString());
  expect(spool.events).toBe(0);
  await spool.close();

  // The same lines read from disk by a new spool (nothing in its memory): batches of the same text.
  await rm(join(dir, "cursor.json"));
  const reopened = new Spool({ dir, maxBytes: 1 << 20 });
  await reopened.ready();
  const again: string[] = [];
  for (;;) {
    const batch = await reopened.read(4);
    if (batch.lines === 0) break;
    again.push(batch.text.toString());
    await reopened.ack(batch);
  }
  await reopened.close();
  expect(again).toEqual(texts);
});

test("a line in the spool that does not parse is skipped and reported; the events around it are delivered", async () => {
  const dir = await spoolDir();
  const sinkDir = join(dir, "otel%3Acollector");
  await mkdir(sinkDir, { recursive: true });
  await writeFile(
    join(sinkDir, "000000000001.jsonl"),
    `${JSON.stringify(event(0))}\n{"torn": \n${JSON.stringify(event(1))}\n`,
  );
  const errors: string[] = [];
  const up = new TestSink("otel:collector");
  const log = auditLog({
    sinks: [up],
    spool: { dir, maxBytes: 1 << 20 },
    onSinkError: (error) => errors.push((error as Error).message),
  });
  await log.drain();
  expect(up.received.filter((received) => received.instance === "i").map((received) => received.seq)).toEqual(
    [0, 1],
  );
  expect(errors).toEqual(["an unreadable line in the spool of sink otel:collector was skipped"]);
});
