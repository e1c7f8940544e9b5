// The export worker thread's side (export-thread.ts starts it): it builds the exporters' sinks and runs their writes,
// so the client libraries' serialisation, compression and HTTP work happens off the thread that serves requests. The
// audit log's queues, spools, retries and health stay on the main thread; each write here is one batch of one sink,
// answered with what was accepted.
//
// The thread lowers its own scheduling priority (its niceness, `workerData.niceness`): when the machine's cores are
// all busy, serving requests comes first and the exporters catch up from their spools when there is CPU to spare.
// Linux only (a thread's id from /proc/thread-self); elsewhere, or if refused, the thread runs at normal priority.
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { basename } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { parsedEvent } from "../event-json.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import { buildExporterSinkNow, type ExporterSpec } from "./index.ts";

export interface ExportWorkerData {
  /** 0 (normal) to 19 (lowest priority). */
  niceness: number;
}

export type ToExportWorker =
  | { type: "build"; id: number; spec: ExporterSpec }
  /** `lines`: each event's JSON text, as the spool holds it. */
  | { type: "write"; id: number; call: number; lines: string[] }
  | { type: "close"; id: number; call: number };

export type FromExportWorker =
  | { type: "started"; niceness: number | undefined }
  | { type: "built"; id: number; error?: string }
  | { type: "done"; call: number }
  | {
      type: "failed";
      call: number;
      message: string;
      /** Positions in the batch of the events still to deliver; all of them when absent. */
      remaining?: number[];
      retryAfterMs?: number;
      permanent: boolean;
    };

const port = parentPort;
if (port === null) throw new Error("export-worker.ts runs as a worker thread (export-thread.ts starts it)");
const post = (message: FromExportWorker) => port.postMessage(message);

/** Sets this thread's niceness, never raising its priority (a process started niced stays at least that nice). */
function lowerOwnPriority(niceness: number): number | undefined {
  try {
    const threadId = Number(basename(readlinkSync("/proc/thread-self")));
    const current = getPriority(threadId);
    if (current < niceness) setPriority(threadId, niceness);
    return Math.max(current, niceness);
  } catch {
    return undefined;
  }
}

/** A sink, or why it could not be built (its writes fail with that, so the queue's health shows it). */
const sinks = new Map<number, Promise<AuditSink>>();

async function write(id: number, call: number, lines: string[]): Promise<void> {
  const sink = sinks.get(id);
  let batch: ChainedAuditEvent[] = [];
  try {
    if (sink === undefined) throw new Error(`export worker: no sink ${id}`);
    batch = lines.map(parsedEvent);
    await (await sink).write(batch);
    post({ type: "done", call });
  } catch (error) {
    const failure = error instanceof SinkWriteError ? error : undefined;
    let remaining: number[] | undefined;
    if (failure?.remaining !== undefined) {
      const positions = new Map(batch.map((event, position) => [event, position]));
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

port.on("message", (message: ToExportWorker) => {
  switch (message.type) {
    case "build": {
      const built = buildExporterSinkNow(message.spec);
      sinks.set(message.id, built);
      built.then(
        () => post({ type: "built", id: message.id }),
        (error: unknown) =>
          post({
            type: "built",
            id: message.id,
            error: error instanceof Error ? error.message : String(error),
          }),
      );
      return;
    }
    case "write":
      void write(message.id, message.call, message.lines);
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

post({ type: "started", niceness: lowerOwnPriority((workerData as ExportWorkerData).niceness) });
