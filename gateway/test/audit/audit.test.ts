import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ChainedAuditEvent } from "../../src/audit/audit-event.ts";
import { AuditLog, type AuditSink, streamSink } from "../../src/audit/audit-log.ts";
import { verifyChain } from "../../src/audit/verify-chain.ts";

const BIN = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;

/** Writes events through the real AuditLog into a stream and returns the JSON lines. */
async function auditLines(count: number, instance = "gw-a"): Promise<string[]> {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk) => {
    text += chunk;
  });
  const log = new AuditLog({ gateway: "gw", sinks: [streamSink(stream)], instance });
  for (let i = 0; i < count; i++) {
    log.record({
      kind: "call_completed",
      request_id: `r${i}`,
      server: "s",
      method: "tools/call",
      status: 200,
      latency_ms: i,
    });
  }
  await log.drain();
  return text.trim().split("\n");
}

describe("the audit log", () => {
  test("writes every recorded event, in order, with the documented fields", async () => {
    const lines = await auditLines(3);
    const events = lines.map((l) => JSON.parse(l) as ChainedAuditEvent);
    expect(events.map((e) => [e.seq, e.request_id])).toEqual([
      [0, "r0"],
      [1, "r1"],
      [2, "r2"],
    ]);
    expect(Object.keys(events[0] ?? {}).sort()).toEqual(
      [
        "time",
        "kind",
        "request_id",
        "gateway",
        "source",
        "server",
        "method",
        "capability",
        "subject",
        "provider",
        "groups",
        "decision",
        "reason",
        "status",
        "latency_ms",
        "count",
        "instance",
        "seq",
        "prev_hash",
        "hash",
      ].sort(),
    );
    expect(events[1]?.prev_hash).toBe(events[0]?.hash);
  });

  test("record() does no I/O: nothing is written before the event loop turns", async () => {
    const writes: number[] = [];
    const sink: AuditSink = { name: "test", write: async (batch) => void writes.push(batch.length) };
    const log = new AuditLog({ gateway: "gw", sinks: [sink] });
    log.record({ kind: "call_completed" });
    expect(writes).toEqual([]);
    await log.drain();
    expect(writes).toEqual([1]);
  });

  test("a failing sink is retried until it takes the batch: nothing is lost", async () => {
    let failures = 2;
    const received: ChainedAuditEvent[] = [];
    const sink: AuditSink = {
      name: "test",
      write: async (batch) => {
        if (failures-- > 0) throw new Error("collector down");
        received.push(...batch);
      },
    };
    const errors: unknown[] = [];
    const log = new AuditLog({
      gateway: "gw",
      sinks: [sink],
      retryDelayMs: 1,
      onSinkError: (e) => errors.push(e),
    });
    log.record({ kind: "upstream_error", server: "s" });
    log.record({ kind: "call_completed", server: "s" });
    await log.drain();
    expect(errors).toHaveLength(2);
    expect(received.map((e) => e.kind)).toEqual(["upstream_error", "call_completed"]);
    expect(verifyChain(received.map((e) => JSON.stringify(e)).join("\n")).problems).toEqual([]);
  });

  test("a full queue drops events and records the drop in the chain", async () => {
    const received: ChainedAuditEvent[] = [];
    const log = new AuditLog({
      gateway: "gw",
      capacity: 2,
      sinks: [{ name: "test", write: async (b) => void received.push(...b) }],
    });
    for (let i = 0; i < 5; i++) log.record({ kind: "call_completed", request_id: `r${i}` });
    await log.drain();
    expect(received.map((e) => e.request_id ?? e.reason)).toEqual([
      "r0",
      "r1",
      "3 audit events dropped: the queue was full",
    ]);
    expect(received.at(-1)).toMatchObject({ kind: "events_dropped", count: 3 });
    expect(log.droppedTotal).toBe(3);
  });
});

describe("verifyChain", () => {
  test("an untouched log is intact, with several instances interleaved", async () => {
    const a = await auditLines(3, "gw-a");
    const b = await auditLines(2, "gw-b");
    const report = verifyChain([a[0], b[0], a[1], b[1], a[2]].join("\n"));
    expect(report).toEqual({ events: 5, instances: 2, problems: [] });
  });

  test("an edited event fails its hash", async () => {
    const lines = await auditLines(3);
    lines[1] = (lines[1] ?? "").replace('"status":200', '"status":403');
    expect(verifyChain(lines.join("\n")).problems).toEqual([
      { line: 2, message: "seq 1: hash does not match the content (edited)" },
    ]);
  });

  test("an edit with a recomputed hash still breaks the link to the next event", async () => {
    const { hashOf } = await import("../../src/audit/hash-chain.ts");
    const lines = await auditLines(3);
    const event = JSON.parse(lines[1] ?? "") as ChainedAuditEvent;
    const { hash: _old, ...rest } = { ...event, status: 403 };
    lines[1] = JSON.stringify({ ...rest, hash: hashOf(rest) });
    expect(verifyChain(lines.join("\n")).problems).toEqual([
      { line: 3, message: "seq 2: prev_hash does not link to the event before" },
    ]);
  });

  test("a deleted event breaks the sequence and the link", async () => {
    const lines = await auditLines(4);
    lines.splice(2, 1);
    expect(verifyChain(lines.join("\n")).problems).toEqual([
      { line: 3, message: "seq 3 follows seq 1 (events missing or out of order)" },
      { line: 3, message: "seq 3: prev_hash does not link to the event before" },
    ]);
  });

  test("a deleted first event is caught unless the file may start mid-chain", async () => {
    const lines = (await auditLines(3)).slice(1);
    expect(verifyChain(lines.join("\n")).problems).toEqual([
      { line: 1, message: "instance gw-a starts at seq 1, not 0 (events before it are missing)" },
    ]);
    expect(verifyChain(lines.join("\n"), { allowPartial: true }).problems).toEqual([]);
  });

  test("junk lines are reported", () => {
    expect(verifyChain('not json\n{"a":1}\n').problems).toEqual([
      { line: 1, message: "not a JSON object" },
      { line: 2, message: "not an audit event (no instance or seq)" },
    ]);
  });
});

describe("svc-gateway audit verify", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "svc-audit-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, "audit", ...args], (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });

  test("exit 0 for an intact file, 1 for a tampered one, 2 for usage errors", async () => {
    const lines = await auditLines(3);
    const good = path.join(dir, "good.jsonl");
    const bad = path.join(dir, "bad.jsonl");
    await writeFile(good, `${lines.join("\n")}\n`);
    await writeFile(bad, `${[lines[0], lines[2]].join("\n")}\n`);
    expect(await run(["verify", good])).toMatchObject({
      code: 0,
      stdout: "intact: 3 events from 1 gateway instance(s)\n",
    });
    const tampered = await run(["verify", bad]);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain("line 2: seq 2 follows seq 0 (events missing or out of order)");
    expect((await run(["verify"])).code).toBe(2);
    expect((await run(["verify", path.join(dir, "missing.jsonl")])).code).toBe(2);
  });
});
