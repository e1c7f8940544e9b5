// The export process's side (export-process.ts forks it): it builds the exporters' sinks and runs their writes, so the
// client libraries' serialisation, compression and HTTP — and the garbage they make — are paid in a process of their
// own. The audit log's queues, spools, retries and health stay in the gateway; each write here is one batch of one
// sink, answered with what was accepted.
//
// Once its first sinks are built (below), every thread of this process runs at a lower scheduling priority (the
// niceness in argv[2]): its main thread, and
// also V8's collector threads and libuv's pool, which in a worker thread of the gateway would have been the
// gateway's own, shared with requests. With argv[3] "idle" the threads also take Linux's SCHED_IDLE policy: they run
// only on a core nothing else wants, and a request's thread waking up takes the core at once. A nice value alone
// does not do that: the scheduler lets a niced thread finish its slice first, and a gateway serving requests in a
// closed loop waits on every such delay (measured: the secured path kept 0.74–0.83 of its throughput with exporting
// at niceness 10, 0.85–1.16 as SCHED_IDLE; what is still lost is the gateway's own side of exporting). No Node API sets a policy; util-linux's `chrt` (in every Debian-based
// image, the gateway's included) does. Linux only (threads from /proc/self/task); elsewhere, or if refused, the
// process runs at normal priority, and says so.
import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { parsedEvent, textLines } from "../event-json.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import { buildExporterSinkNow, type ExporterSpec } from "./index.ts";

export type ToExportProcess =
  | { type: "build"; id: number; spec: ExporterSpec }
  /** `text`: the events' JSON lines, each ending in a newline, as the spool holds them. */
  | { type: "write"; id: number; call: number; text: Uint8Array }
  | { type: "close"; id: number; call: number };

export type FromExportProcess =
  | { type: "started"; niceness: number | undefined; idle: boolean }
  | { type: "built"; id: number; error?: string }
  /** `unreadable`: lines of the batch that did not parse, skipped (no retry could deliver them). */
  | { type: "done"; call: number; unreadable?: number }
  | {
      type: "failed";
      call: number;
      message: string;
      /** Positions in the batch of the events still to deliver; all of them when absent. */
      remaining?: number[];
      retryAfterMs?: number;
      permanent: boolean;
    };

const send = process.send?.bind(process);
if (send === undefined)
  throw new Error("export-process-child.ts runs as a forked process (export-process.ts starts it)");
// A send that fails means the gateway is gone; "disconnect" below ends this process.
const post = (message: FromExportProcess) => send(message, undefined, undefined, () => {});
// The gateway gone (even SIGKILLed): nothing is left to export for, and its spools hold what was not delivered.
process.on("disconnect", () => process.exit(0));

/**
 * Sets every thread's niceness (those started later inherit it from the thread that starts them), never raising a
 * priority (a process started niced stays at least that nice). Answers the main thread's niceness.
 */
function lowerPriority(niceness: number): number | undefined {
  try {
    for (const task of readdirSync("/proc/self/task")) {
      const threadId = Number(task);
      if (getPriority(threadId) < niceness) setPriority(threadId, niceness);
    }
    return getPriority(process.pid);
  } catch {
    return undefined;
  }
}

/** Puts every thread of this process under SCHED_IDLE; false when that could not be done (no chrt, not Linux). */
function idleScheduling(): boolean {
  try {
    execFileSync("chrt", ["--idle", "--all-tasks", "--pid", "0", String(process.pid)], {
      stdio: "ignore",
      timeout: 5000,
    });
    return true;
  } catch {
    return false;
  }
}

/** A sink, or why it could not be built (its writes fail with that, so the queue's health shows it). */
const sinks = new Map<number, Promise<AuditSink>>();

/**
 * Each sink gets the same events in its own batches; the parsed event of a line is kept for the others, so a line is
 * parsed once rather than once per exporter. Bounded: oldest first out past RECENT_LINES.
 */
const RECENT_LINES = 8192;
const recent = new Map<string, ChainedAuditEvent>();
function eventOf(line: string): ChainedAuditEvent {
  let event = recent.get(line);
  if (event === undefined) {
    event = parsedEvent(line);
    recent.set(line, event);
    if (recent.size > RECENT_LINES) recent.delete(recent.keys().next().value as string);
  }
  return event;
}

async function write(id: number, call: number, text: Uint8Array): Promise<void> {
  const sink = sinks.get(id);
  /** Each event of the batch and the position of its line. */
  const positions = new Map<ChainedAuditEvent, number>();
  try {
    if (sink === undefined) throw new Error(`export process: no sink ${id}`);
    const lines = textLines(text);
    for (let at = 0; at < lines.length; at++) {
      try {
        positions.set(eventOf(lines[at] as string), at);
      } catch {
        // Skipped below, and counted in the answer.
      }
    }
    const unreadable = lines.length - positions.size;
    if (positions.size > 0) await (await sink).write([...positions.keys()]);
    post(unreadable > 0 ? { type: "done", call, unreadable } : { type: "done", call });
  } catch (error) {
    const failure = error instanceof SinkWriteError ? error : undefined;
    let remaining: number[] | undefined;
    if (failure?.remaining !== undefined) {
      remaining = failure.remaining.map((event) => positions.get(event) ?? -1).filter((at) => at >= 0);
    }
    post({
      type: "failed",
      call,
      message: error instanceof Error ? error.message : String(error),
      remaining,
      retryAfterMs: failure?.retryAfterMs,
      permanent: failure?.permanent ?? false,
    });
  }
}

/**
 * The lower priority is taken only once the sinks asked for so far are built. A gateway waits for those builds before
 * it listens, and on a machine whose cores are all busy a niced, let alone idle-only, process would take long to load
 * its client libraries, or never get to: the gateway would not start. So the builds run at the gateway's own priority,
 * and the process says how it runs from then on (`started`) just before it answers the last of them.
 */
let buildsInFlight = 0;
let schedulingSettled = false;
function settleScheduling(): void {
  if (schedulingSettled) return;
  schedulingSettled = true;
  const niceness = lowerPriority(Number(process.argv[2] ?? 0));
  post({ type: "started", niceness, idle: process.argv[3] === "idle" && idleScheduling() });
}

process.on("message", (message: ToExportProcess) => {
  switch (message.type) {
    case "build": {
      const built = buildExporterSinkNow(message.spec);
      sinks.set(message.id, built);
      buildsInFlight += 1;
      const answer = (error?: string) => {
        buildsInFlight -= 1;
        if (buildsInFlight === 0) settleScheduling();
        post(
          error === undefined ? { type: "built", id: message.id } : { type: "built", id: message.id, error },
        );
      };
      built.then(
        () => answer(),
        (error: unknown) => answer(error instanceof Error ? error.message : String(error)),
      );
      return;
    }
    case "write":
      if (buildsInFlight === 0) settleScheduling();
      void write(message.id, message.call, message.text);
      return;
    case "close": {
      const sink = sinks.get(message.id);
      sinks.delete(message.id);
      void (async () => {
        try {
          await (await sink)?.close?.();
          post({ type: "done", call: message.call });
        } catch (error) {
          post({
            type: "failed",
            call: message.call,
            message: error instanceof Error ? error.message : String(error),
            permanent: false,
          });
        }
      })();
      return;
    }
  }
});
