// The audit log's per-sink queues with in-test sinks (plain AuditSink objects): isolation, order, retries honouring
// Retry-After and `remaining`, permanent refusals to the dead-letter file, and reload without loss.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { verifyChain } from "../../src/audit/verify-chain.ts";
import {
  everyOtherLeft,
  permanent,
  plainError,
  range,
  retryAfter,
  seqs,
  TestSink,
  waitFor,
} from "./support/test-sink.ts";

const logs: AuditLog[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close(0);
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

function auditLog(
  options: Partial<ConstructorParameters<typeof AuditLog>[0]> & { sinks: TestSink[] },
): AuditLog {
  const log = new AuditLog({ gateway: "gw", retryDelayMs: 1, retryCapMs: 5, lingerMs: 0, ...options });
  logs.push(log);
  return log;
}

function recordMany(log: AuditLog, count: number): void {
  for (let i = 0; i < count; i++) log.record({ kind: "call_completed", request_id: `r${i}` });
}

describe("one queue per sink", () => {
  test("a sink that hangs does not delay another, and the healthy one gets every event once, in order", async () => {
    const stuck = new TestSink("stuck").block();
    const healthy = new TestSink("healthy");
    const log = auditLog({ sinks: [stuck, healthy], batchSize: 10 });
    recordMany(log, 25);
    await waitFor(() => expect(healthy.received).toHaveLength(25));
    expect(seqs(healthy.received)).toEqual(range(0, 25));
    expect(stuck.received).toHaveLength(0);
    recordMany(log, 5);
    await waitFor(() => expect(healthy.received).toHaveLength(30));
    stuck.release();
    await log.drain();
    expect(seqs(stuck.received)).toEqual(range(0, 30));
    expect(seqs(healthy.received)).toEqual(range(0, 30));
  });

  test("a failing sink is retried while another delivers; both chains verify and are the same chain", async () => {
    const failing = new TestSink("failing").down();
    const healthy = new TestSink("healthy");
    const log = auditLog({ sinks: [failing, healthy] });
    recordMany(log, 50);
    await waitFor(() => expect(healthy.received).toHaveLength(50));
    await waitFor(() => expect(failing.attempts.length).toBeGreaterThan(3));
    failing.up();
    await log.drain();
    expect(failing.received).toEqual(healthy.received);
    const text = failing.received.map((event) => JSON.stringify(event)).join("\n");
    expect(verifyChain(text).problems).toEqual([]);
  });
});

describe("retries", () => {
  test("Retry-After is a floor for the next attempt", async () => {
    const sink = new TestSink("limited").failNext(retryAfter(150));
    const log = auditLog({ sinks: [sink] });
    recordMany(log, 3);
    await log.drain();
    expect(sink.attempts).toHaveLength(2);
    const [first, second] = sink.attempts;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(140);
    expect(seqs(sink.received)).toEqual([0, 1, 2]);
  });

  test("only what the sink reports as remaining is sent again", async () => {
    const sink = new TestSink("partial").failNext(everyOtherLeft);
    const log = auditLog({ sinks: [sink], batchSize: 100 });
    recordMany(log, 6);
    await log.drain();
    expect(sink.attempts.map((attempt) => attempt.size)).toEqual([6, 3]);
    expect(seqs(sink.received).sort((a, b) => a - b)).toEqual(range(0, 6));
  });

  test("batches go out in order, one at a time, by size", async () => {
    const sink = new TestSink("ordered").failNext(plainError, plainError);
    const log = auditLog({ sinks: [sink], batchSize: 4 });
    recordMany(log, 10);
    await log.drain();
    expect(sink.attempts.map((attempt) => [attempt.firstSeq, attempt.size])).toEqual([
      [0, 4],
      [0, 4],
      [0, 4],
      [4, 4],
      [8, 2],
    ]);
    expect(seqs(sink.received)).toEqual(range(0, 10));
  });

  test("a partial batch waits for company up to the linger time, then goes", async () => {
    const sink = new TestSink("lingering");
    const dir = await mkdtemp(join(tmpdir(), "svc-audit-"));
    dirs.push(dir);
    const log = auditLog({ sinks: [sink], lingerMs: 100, spool: { dir, maxBytes: 1 << 20 } });
    const started = Date.now();
    recordMany(log, 3);
    await waitFor(() => expect(sink.received).toHaveLength(3));
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(sink.attempts).toHaveLength(1);
  });

  test("a batch refused for good goes to the dead-letter file, is counted, and the queue moves on", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-audit-"));
    dirs.push(dir);
    const sink = new TestSink("search_index:es").failNext(permanent);
    const errors: unknown[] = [];
    const log = auditLog({
      sinks: [sink],
      batchSize: 2,
      spool: { dir, maxBytes: 1 << 20 },
      onSinkError: (error) => errors.push(error),
    });
    recordMany(log, 4);
    await log.drain();
    expect(seqs(sink.received)).toEqual([2, 3]);
    const deadLetters = (await readFile(join(dir, "search_index%3Aes", "dead-letter.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { seq: number });
    expect(deadLetters.map((event) => event.seq)).toEqual([0, 1]);
    expect(log.sinkStatus()[0]).toMatchObject({ deadLettered: 2, exported: 2 });
    expect(String(errors.at(-1))).toMatch(/2 audit events refused for good by sink search_index:es/);
  });
});

describe("reload", () => {
  test("adding and removing sinks loses nothing queued for the sinks that stay", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-audit-"));
    dirs.push(dir);
    const staying = new TestSink("otel:stays").down();
    const leaving = new TestSink("siem:leaves");
    const log = auditLog({ sinks: [staying, leaving], spool: { dir, maxBytes: 1 << 20 } });
    recordMany(log, 20);
    await waitFor(() => expect(leaving.received).toHaveLength(20));
    const added = new TestSink("search_index:added");
    log.setSinks([staying, added]);
    recordMany(log, 10);
    await waitFor(() => expect(leaving.closed).toBe(true));
    staying.up();
    await log.drain();
    expect(seqs(staying.received)).toEqual(range(0, 30));
    expect(seqs(added.received)).toEqual(range(20, 30));
    expect(seqs(leaving.received)).toEqual(range(0, 20));
  });

  test("an edited sink (same name, new object) takes over the backlog; the old one is closed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-audit-"));
    dirs.push(dir);
    const before = new TestSink("otel:edited").down();
    // Long retry waits: the new sink is tried at once all the same, not after the wait.
    const log = auditLog({
      sinks: [before],
      spool: { dir, maxBytes: 1 << 20 },
      retryDelayMs: 60_000,
      retryCapMs: 60_000,
    });
    recordMany(log, 10);
    await waitFor(() => expect(before.attempts.length).toBeGreaterThan(0));
    const after = new TestSink("otel:edited");
    log.setSinks([after]);
    await log.drain();
    expect(seqs(after.received)).toEqual(range(0, 10));
    await waitFor(() => expect(before.closed).toBe(true));
  });

  test("a removed exporter's undelivered events stay in its spool and go out when it is configured again", async () => {
    const dir = await mkdtemp(join(tmpdir(), "svc-audit-"));
    dirs.push(dir);
    const first = new TestSink("siem:back").down();
    const log = auditLog({ sinks: [first], spool: { dir, maxBytes: 1 << 20 }, removalFlushMs: 50 });
    recordMany(log, 10);
    await waitFor(() => expect(log.sinkStatus()[0]?.backlogEvents).toBe(10));
    log.setSinks([]);
    recordMany(log, 5); // recorded while it is not configured: never meant for it
    await log.drain();
    const again = new TestSink("siem:back");
    log.setSinks([again]);
    recordMany(log, 5);
    await log.drain();
    expect(seqs(again.received)).toEqual([...range(0, 10), ...range(15, 20)]);
  });
});
