// The exporters' sinks, run in a worker thread of their own (export-worker.ts): what each sink costs per event (the
// client libraries' serialisation, compression, HTTP) is paid off the thread that serves requests, and at a lower
// scheduling priority, so that on a machine whose cores are all busy exporting waits for spare CPU instead of taking
// it from requests. Nothing is lost by waiting: every event is in its exporter's spool before a sink sees it, and the
// queue sends it again until the sink accepts it.
//
// The sinks made here look like any other to the audit log (audit-log.ts): each write posts one batch (the events'
// JSON text, already made for the spool) and settles with the worker's answer, which names the events still to
// deliver. If the thread stops, the writes in flight fail (their queues retry) and the next write starts a new thread,
// which rebuilds every sink still in use.
import { Worker } from "node:worker_threads";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { eventJson } from "../event-json.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import type { ExportWorkerData, FromExportWorker, ToExportWorker } from "./export-worker.ts";
import type { ExporterSpec } from "./index.ts";

interface PendingCall {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** The batch of a write, to name the events the worker says are still to deliver. */
  batch: readonly ChainedAuditEvent[] | undefined;
}

export interface ExportThreadOptions {
  /** Niceness of the worker thread: 0 (normal) to 19 (lowest priority). */
  niceness: number;
  /** Told when the thread stops unexpectedly (its writes in flight are retried by their queues). */
  onStopped?: (reason: string) => void;
  /** Told when a thread has started: the niceness it runs at, undefined when it could not lower its priority. */
  onStarted?: (niceness: number | undefined) => void;
  /**
   * Bound on the thread's V8 old generation, in MiB (default 256: the three client libraries and a few batches in
   * flight need a fraction of it). Past it the thread is stopped and started again, like any other failure.
   */
  maxHeapMb?: number;
}

export class ExportThread {
  readonly #options: ExportThreadOptions;
  #worker: Worker | undefined;
  /** The sinks in use, by id: sent again to a new thread. */
  readonly #specs = new Map<number, ExporterSpec>();
  /** Builds not yet answered (settled when they are), and the failures of those answered since the last `built()`. */
  readonly #building = new Map<number, { answered: Promise<void>; settle: () => void }>();
  readonly #buildFailures: string[] = [];
  readonly #calls = new Map<number, PendingCall>();
  #nextId = 1;
  #nextCall = 1;
  #closed = false;
  /** The niceness the running thread set for itself (undefined: it runs at normal priority, or has not said yet). */
  niceness: number | undefined;

  constructor(options: ExportThreadOptions) {
    this.#options = options;
  }

  /** A sink whose writes run in the thread; the thread builds the real one now (its module loaded first). */
  sink(spec: ExporterSpec): AuditSink {
    const id = this.#nextId++;
    // Posted before it joins the sinks in use: a thread started by this very post is sent those, and must not get
    // this one twice.
    this.#build(id, spec);
    this.#specs.set(id, spec);
    return {
      name: spec.name,
      write: (batch) =>
        batch.length === 0
          ? Promise.resolve()
          : this.#call((call) => ({ type: "write", id, call, lines: batch.map(eventJson) }), batch),
      close: async () => {
        if (!this.#specs.delete(id) || this.#worker === undefined) return;
        await this.#call((call) => ({ type: "close", id, call }), undefined).catch(() => {});
      },
    };
  }

  /**
   * Resolves once every sink asked for so far is built; rejects naming each one that could not be (a bad setting),
   * so a start with such an exporter fails as it would in one thread.
   */
  async built(): Promise<void> {
    await Promise.all([...this.#building.values()].map((build) => build.answered));
    const failures = this.#buildFailures.splice(0);
    if (failures.length > 0) throw new Error(failures.join("; "));
  }

  /** Ends the thread (the audit log has closed the sinks by then); a write after this fails. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #build(id: number, spec: ExporterSpec): void {
    if (!this.#building.has(id)) {
      let settle = () => {};
      const answered = new Promise<void>((resolve) => {
        settle = resolve;
      });
      this.#building.set(id, { answered, settle });
    }
    this.#post({ type: "build", id, spec });
  }

  #call(
    message: (call: number) => ToExportWorker,
    batch: readonly ChainedAuditEvent[] | undefined,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const call = this.#nextCall++;
      this.#calls.set(call, { resolve, reject, batch });
      this.#worker?.ref();
      try {
        this.#post(message(call));
      } catch (error) {
        this.#calls.delete(call);
        reject(error);
      }
    });
  }

  #post(message: ToExportWorker): void {
    if (this.#closed) throw new SinkWriteError("the export thread is closed");
    this.#started().postMessage(message);
  }

  #started(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    // The worker module beside this one: .ts in a checkout (type stripping), .js in the compiled package.
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    const worker = new Worker(new URL(`./export-worker.${extension}`, import.meta.url), {
      workerData: { niceness: this.#options.niceness } satisfies ExportWorkerData,
      resourceLimits: { maxOldGenerationSizeMb: this.#options.maxHeapMb ?? 256 },
    });
    this.#worker = worker;
    worker.on("message", (message: FromExportWorker) => this.#answer(message));
    worker.on("error", (error) => this.#stopped(worker, `the export thread failed: ${error.message}`));
    worker.on("exit", (code) => this.#stopped(worker, `the export thread stopped (exit code ${code})`));
    // Idle, the thread must not keep the process alive; with writes in flight it must (see #call and #answer).
    worker.unref();
    // A new thread after a stop: it gets every sink still in use, before the message that started it.
    for (const [id, spec] of this.#specs) this.#build(id, spec);
    return worker;
  }

  #answer(message: FromExportWorker): void {
    switch (message.type) {
      case "started":
        this.niceness = message.niceness;
        this.#options.onStarted?.(message.niceness);
        return;
      case "built": {
        const build = this.#building.get(message.id);
        this.#building.delete(message.id);
        if (message.error !== undefined) {
          const spec = this.#specs.get(message.id);
          this.#buildFailures.push(`exporter ${spec?.name ?? message.id}: ${message.error}`);
        }
        build?.settle();
        return;
      }
      case "done":
      case "failed": {
        const pending = this.#calls.get(message.call);
        if (pending === undefined) return;
        this.#calls.delete(message.call);
        if (this.#calls.size === 0) this.#worker?.unref();
        if (message.type === "done") {
          pending.resolve();
          return;
        }
        const batch = pending.batch ?? [];
        pending.reject(
          new SinkWriteError(message.message, {
            remaining: message.remaining?.map((at) => batch[at] as ChainedAuditEvent),
            retryAfterMs: message.retryAfterMs,
            permanent: message.permanent,
          }),
        );
        return;
      }
    }
  }

  #stopped(worker: Worker, reason: string): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    this.niceness = undefined;
    if (!this.#closed) this.#options.onStopped?.(reason);
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    for (const call of calls) call.reject(new SinkWriteError(reason));
    // Builds in flight are sent again with the next thread; a `built()` waiting on them must not hang.
    for (const build of this.#building.values()) build.settle();
    this.#building.clear();
  }
}
