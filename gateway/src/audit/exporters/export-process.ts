// The exporters' sinks, run in a child process of their own (export-process-child.ts): what each sink costs per event
// (the client libraries' serialisation, compression, HTTP, and collecting their garbage) is paid off the process that
// serves requests, and at a lower scheduling priority, so that on a machine whose cores are all busy exporting waits
// for spare CPU instead of taking it from requests. A process rather than a worker thread: a worker's garbage is
// collected by V8's helper threads, which the gateway's requests share and which cannot be given a lower priority
// without slowing requests' own collections; a child's are its own, and run at its priority. Nothing is lost by
// waiting: every event is in its exporter's spool before a sink sees it, and the queue sends it again until the sink
// accepts it.
//
// The sinks made here look like any other to the audit log (audit-log.ts): each write sends one batch (the events'
// JSON text, already made for the spool) and settles with the child's answer, which names the events still to
// deliver. If the process stops, the writes in flight fail (their queues retry) and the next write starts a new one,
// which rebuilds every sink still in use. The child ends when the gateway does, however it ends (its IPC channel
// closes).
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { eventsText, parsedEvent, textLines } from "../event-json.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import type { FromExportProcess, ToExportProcess } from "./export-process-child.ts";
import type { ExporterSpec } from "./index.ts";

interface PendingCall {
  resolve: () => void;
  reject: (error: unknown) => void;
  /** The batch of a write (events, or a spool's lines), to name the events the child says are still to deliver. */
  batch: readonly ChainedAuditEvent[] | Buffer | undefined;
  /** The sink's name, to report what the child could not read. */
  sink: string;
}

export interface ExportProcessOptions {
  /** Niceness of the process's threads: 0 (normal) to 19 (lowest priority). */
  niceness: number;
  /** Told when the process stops unexpectedly (its writes in flight are retried by their queues). */
  onStopped?: (reason: string) => void;
  /** Told when lines of a sink's batch did not parse in the child and were skipped (a damaged spool). */
  onUnreadable?: (sink: string, lines: number) => void;
  /**
   * Run the child under SCHED_IDLE (only on otherwise idle cores) as well as niced; default false. `setIdle` changes
   * it later.
   */
  idle?: boolean;
  /**
   * Told when a process has started: the niceness it runs at (undefined when it could not lower its priority) and
   * whether it runs under SCHED_IDLE.
   */
  onStarted?: (niceness: number | undefined, idle: boolean) => void;
  /**
   * Bound on the process's V8 old generation, in MiB (default 256: the three client libraries and a few batches in
   * flight need a fraction of it). Past it the process dies and is started again, like any other failure.
   */
  maxHeapMb?: number;
}

export class ExportProcess {
  readonly #options: ExportProcessOptions;
  #child: ChildProcess | undefined;
  /** The sinks in use, by id: sent again to a new process. */
  readonly #specs = new Map<number, ExporterSpec>();
  /** Builds not yet answered (settled when they are), and the failures of those answered since the last `built()`. */
  readonly #building = new Map<number, { answered: Promise<void>; settle: () => void }>();
  readonly #buildFailures: string[] = [];
  readonly #calls = new Map<number, PendingCall>();
  #nextId = 1;
  #nextCall = 1;
  #closed = false;
  #idle: boolean;
  /** The niceness the running process set for itself (undefined: it runs at normal priority, or has not said yet). */
  niceness: number | undefined;
  /** Whether the running process said it runs under SCHED_IDLE. */
  idle = false;

  constructor(options: ExportProcessOptions) {
    this.#options = options;
    this.#idle = options.idle ?? false;
  }

  /**
   * Idle scheduling on or off for the child from now on. A thread cannot leave SCHED_IDLE by itself (that is raising
   * its priority), so a running child is replaced: its writes in flight fail and their queues send them again.
   */
  setIdle(idle: boolean): void {
    if (idle === this.#idle) return;
    this.#idle = idle;
    const child = this.#child;
    if (child !== undefined)
      this.#stopped(child, "the export process is restarted to change its scheduling", true);
  }

  /** The names of the sinks in use (the exporters the child runs). */
  sinkNames(): Set<string> {
    return new Set([...this.#specs.values()].map((spec) => spec.name));
  }

  /** The running child's process id (undefined before the first sink, or between a stop and the next write). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** A sink whose writes run in the child; the child builds the real one now (its module loaded first). */
  sink(spec: ExporterSpec): AuditSink {
    const id = this.#nextId++;
    // Sent before it joins the sinks in use: a process started by this very send is sent those, and must not get
    // this one twice.
    this.#build(id, spec);
    this.#specs.set(id, spec);
    return {
      name: spec.name,
      write: (batch) =>
        batch.length === 0
          ? Promise.resolve()
          : this.#call(spec.name, (call) => ({ type: "write", id, call, text: eventsText(batch) }), batch),
      // A spool's lines go as they are, parsed only in the child.
      writeLines: (text) => this.#call(spec.name, (call) => ({ type: "write", id, call, text }), text),
      close: async () => {
        if (!this.#specs.delete(id) || this.#child === undefined) return;
        await this.#call(spec.name, (call) => ({ type: "close", id, call }), undefined).catch(() => {});
      },
    };
  }

  /**
   * Resolves once every sink asked for so far is built; rejects naming each one that could not be (a bad setting),
   * so a start with such an exporter fails as it would in one process.
   */
  async built(): Promise<void> {
    await Promise.all([...this.#building.values()].map((build) => build.answered));
    const failures = this.#buildFailures.splice(0);
    if (failures.length > 0) throw new Error(failures.join("; "));
  }

  /** Ends the child (the audit log has closed the sinks by then); a write after this fails. */
  async close(): Promise<void> {
    this.#closed = true;
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill();
    await exited;
  }

  #build(id: number, spec: ExporterSpec): void {
    if (!this.#building.has(id)) {
      let settle = () => {};
      const answered = new Promise<void>((resolve) => {
        settle = resolve;
      });
      this.#building.set(id, { answered, settle });
    }
    const child = this.#started();
    this.#keepAliveWhileWaiting();
    this.#send(child, { type: "build", id, spec });
  }

  /**
   * Idle, the child must not keep the gateway alive; while a build or write waits for its answer it must (a start
   * waiting on `built()` has nothing else to keep it running yet).
   */
  #keepAliveWhileWaiting(): void {
    const channel = this.#child?.channel;
    if (this.#calls.size > 0 || this.#building.size > 0) channel?.ref();
    else channel?.unref();
  }

  #call(
    sink: string,
    message: (call: number) => ToExportProcess,
    batch: PendingCall["batch"],
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const call = this.#nextCall++;
      this.#calls.set(call, { resolve, reject, batch, sink });
      try {
        const child = this.#started();
        this.#keepAliveWhileWaiting();
        this.#send(child, message(call));
      } catch (error) {
        this.#calls.delete(call);
        reject(error);
      }
    });
  }

  #send(child: ChildProcess, message: ToExportProcess): void {
    if (this.#closed) throw new SinkWriteError("the export process is closed");
    // A send the channel refuses (the child just died) is answered by its exit, which fails every call in flight.
    child.send(message, (error) => {
      if (error) this.#stopped(child, `the export process could not be reached: ${error.message}`);
    });
  }

  #started(): ChildProcess {
    if (this.#child !== undefined) return this.#child;
    if (this.#closed) throw new SinkWriteError("the export process is closed");
    // The child's module beside this one: .ts in a checkout (type stripping), .js in the compiled package.
    const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
    const child = fork(
      fileURLToPath(new URL(`./export-process-child.${extension}`, import.meta.url)),
      [String(this.#options.niceness), this.#idle ? "idle" : "normal"],
      {
        execArgv: [`--max-old-space-size=${this.#options.maxHeapMb ?? 256}`],
        // Structured clone, not JSON: the batches are arrays of strings, copied as they are.
        serialization: "advanced",
        // Its stdout is not the gateway's (which may be the audit trail); its stderr is, for a crash's last words.
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      },
    );
    this.#child = child;
    child.on("message", (message: FromExportProcess) => this.#answer(message));
    child.on("error", (error) => this.#stopped(child, `the export process failed: ${error.message}`));
    child.on("exit", (code, signal) =>
      this.#stopped(child, `the export process stopped (${signal ?? `exit code ${code}`})`),
    );
    // The process itself never keeps the gateway alive; its channel does only while an answer is awaited.
    child.unref();
    child.channel?.unref();
    // A new process after a stop: it gets every sink still in use, before the message that started it.
    for (const [id, spec] of this.#specs) this.#build(id, spec);
    return child;
  }

  #answer(message: FromExportProcess): void {
    switch (message.type) {
      case "started":
        this.niceness = message.niceness;
        this.idle = message.idle;
        this.#options.onStarted?.(message.niceness, message.idle);
        return;
      case "built": {
        const build = this.#building.get(message.id);
        this.#building.delete(message.id);
        if (message.error !== undefined) {
          const spec = this.#specs.get(message.id);
          this.#buildFailures.push(`exporter ${spec?.name ?? message.id}: ${message.error}`);
        }
        build?.settle();
        this.#keepAliveWhileWaiting();
        return;
      }
      case "done":
      case "failed": {
        const pending = this.#calls.get(message.call);
        if (pending === undefined) return;
        this.#calls.delete(message.call);
        this.#keepAliveWhileWaiting();
        if (message.type === "done") {
          if (message.unreadable !== undefined)
            this.#options.onUnreadable?.(pending.sink, message.unreadable);
          pending.resolve();
          return;
        }
        pending.reject(
          new SinkWriteError(message.message, {
            remaining: remainingEvents(pending.batch, message.remaining),
            retryAfterMs: message.retryAfterMs,
            permanent: message.permanent,
          }),
        );
        return;
      }
    }
  }

  #stopped(child: ChildProcess, reason: string, expected = false): void {
    if (this.#child !== child) return;
    this.#child = undefined;
    this.niceness = undefined;
    this.idle = false;
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    if (!this.#closed && !expected) this.#options.onStopped?.(reason);
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    for (const call of calls) call.reject(new SinkWriteError(reason));
    // Builds in flight are sent again with the next process; a `built()` waiting on them must not hang.
    for (const build of this.#building.values()) build.settle();
    this.#building.clear();
  }
}

/** The events at `positions` of a batch (a spool's lines are parsed here: only these, and only after a failure). */
function remainingEvents(
  batch: readonly ChainedAuditEvent[] | Buffer | undefined,
  positions: number[] | undefined,
): ChainedAuditEvent[] | undefined {
  if (positions === undefined || batch === undefined) return undefined;
  if (!Buffer.isBuffer(batch)) return positions.map((at) => batch[at] as ChainedAuditEvent);
  const lines = textLines(batch);
  // The child answered positions of lines it parsed, so these parse here too.
  return positions.map((at) => parsedEvent(lines[at] as string));
}
