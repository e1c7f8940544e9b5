// One sink's own queue: its backlog (in memory, or the on-disk spool), batching, retries and its health. Each sink has
// one, so a slow or dead sink only ever holds up itself. Order is kept: one batch at a time, and a batch leaves the
// backlog only once the sink accepted all of it (what the sink reports as `remaining` is retried alone, the accepted
// part is not sent again). A batch the sink refuses for good (`permanent`) goes to the dead-letter file and is counted.
import { appendFile, mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import type { ChainedAuditEvent } from "./audit-event.ts";
import { type BackoffPolicy, retryDelayMs } from "./backoff.ts";
import { eventsText, parsedLines } from "./event-json.ts";
import type { Backlog, BacklogBatch } from "./memory-backlog.ts";
import { type AuditSink, SinkWriteError } from "./sink.ts";

/**
 * ok: delivering. retrying: the last attempt failed. behind: the backlog is past `behindEvents`. failing: every attempt
 * has failed for `failingLimitMs` or more. spool_full: new events are being dropped, because the backlog is at its cap
 * or the spool directory cannot be used.
 */
export type SinkState = "ok" | "retrying" | "behind" | "failing" | "spool_full";

export interface SinkStatus {
  name: string;
  state: SinkState;
  backlogEvents: number;
  backlogBytes: number;
  /** How long events have been waiting without the sink taking any (0 when none wait). */
  stalledMs: number;
  exported: number;
  failures: number;
  dropped: number;
  deadLettered: number;
}

/** What a queue asks before it starts a batch (defer-under-load.ts holds exports back while the gateway is busy). */
export interface DeliveryGate {
  readonly open: boolean;
  /** Resolves when the gate opens (at once when it is open). */
  whenOpen(): Promise<void>;
}

export interface SinkQueueOptions {
  sink: AuditSink;
  backlog: Backlog;
  batchSize: number;
  /** A batch smaller than batchSize waits this long for company (0: sends at once). */
  lingerMs: number;
  backoff: BackoffPolicy;
  now: () => number;
  failingLimitMs: number;
  behindEvents: number;
  /**
   * Asked before each new batch (not before a retry, nor while flushing): a closed gate holds the backlog back.
   * Only for a backlog that may wait (the spool); undefined: never held.
   */
  gate?: DeliveryGate;
  /** Where refused-for-good events are appended (JSON lines); undefined: they are only counted and reported. */
  deadLetterFile: string | undefined;
  onError: (sink: string, error: unknown) => void;
  /** Events the backlog refused (cap reached); `streakStart` is true for the first refusal after accepting. */
  onDropped: (sink: string, count: number, streakStart: boolean) => void;
  /** The backlog accepts again after refusing `count` events. */
  onDropStreakEnd: (sink: string, count: number) => void;
  onDeadLettered: (sink: string, count: number, error: unknown) => void;
}

export class SinkQueue {
  readonly name: string;
  #sink: AuditSink;
  readonly #backlog: Backlog;
  readonly #options: SinkQueueOptions;
  #exported = 0;
  #failures = 0;
  #dropped = 0;
  #droppedInStreak = 0;
  #deadLettered = 0;
  #failingSince: number | undefined;
  #waitingSince: number | undefined;
  /** flush() calls waiting: while any is, partial batches go out without lingering. */
  #hurry = 0;
  /**
   * The loop waits for the gate: new events cannot change that, so they do not wake it (under load a wake per
   * background flush per exporter was a measurable share of the gateway's CPU). A flush, a close or a new sink do.
   */
  #heldAtGate = false;
  #stopped = false;
  /** The backlog could not be opened (an unusable spool directory): events for this sink are dropped, and said so. */
  #broken = false;
  /** Resolved (and replaced) whenever something the loop or a waiter may care about changed. */
  #changed!: Promise<void>;
  #signal!: () => void;
  readonly #running: Promise<void>;
  /** Sinks replaced while a write of theirs may be in flight, closed when the loop next lets go of them. */
  readonly #retired: AuditSink[] = [];

  constructor(options: SinkQueueOptions) {
    this.name = options.sink.name;
    this.#sink = options.sink;
    this.#backlog = options.backlog;
    this.#options = options;
    this.#resetSignal();
    this.#backlog.onWritten = () => {
      if (!this.#heldAtGate) this.#notify();
    };
    this.#running = this.#run();
  }

  /** Called from the background flush, never the request path; a refused append is counted, not awaited. */
  enqueue(events: readonly ChainedAuditEvent[]): void {
    if (this.#stopped) return;
    const taken = this.#broken ? 0 : this.#backlog.append(events);
    if (taken > 0) {
      if (this.#droppedInStreak > 0) {
        const count = this.#droppedInStreak;
        this.#droppedInStreak = 0;
        this.#options.onDropStreakEnd(this.name, count);
      }
      this.#waitingSince ??= this.#options.now();
      if (!this.#heldAtGate) this.#notify();
    }
    const lost = events.length - taken;
    if (lost > 0) {
      this.#dropped += lost;
      this.#droppedInStreak += lost;
      this.#options.onDropped(this.name, lost, this.#droppedInStreak === lost);
    }
  }

  /** An edited exporter: the next attempt uses the new sink; the backlog (and spool) carries over. */
  replaceSink(sink: AuditSink): void {
    if (sink === this.#sink) return;
    this.#retired.push(this.#sink);
    this.#sink = sink;
    this.#notify();
  }

  status(): SinkStatus {
    return {
      name: this.name,
      state: this.#state(),
      backlogEvents: this.#backlog.events,
      backlogBytes: this.#backlog.bytes,
      stalledMs:
        this.#backlog.events > 0 && this.#waitingSince !== undefined
          ? this.#options.now() - this.#waitingSince
          : 0,
      exported: this.#exported,
      failures: this.#failures,
      dropped: this.#dropped,
      deadLettered: this.#deadLettered,
    };
  }

  /** True when nothing is waiting: every event enqueued so far was delivered (or dead-lettered). */
  get empty(): boolean {
    return this.#broken || this.#backlog.events === 0;
  }

  /**
   * Sends what is waiting without lingering until it is all delivered (true) or `deadline` (a now() value) passes
   * (false). Waits on the queue's own progress, not on a timer, except for the deadline itself.
   */
  async flush(deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    this.#hurry += 1;
    this.#notify();
    // Until the spool on disk has been read, its backlog is not known: empty would be a lie.
    await this.#backlog.ready().catch(() => {});
    try {
      while (!this.empty && !this.#stopped) {
        const left = deadline - this.#options.now();
        if (left <= 0) return false;
        const changed = this.#changed;
        if (Number.isFinite(left)) await raceTimer(changed, left);
        else await changed;
      }
      return this.empty;
    } finally {
      this.#hurry -= 1;
    }
  }

  /**
   * Stops after the attempt in flight (waiting for it at most `graceMs`), then closes the sink and the backlog. What
   * was not delivered stays in the spool for the next start; an in-memory backlog's rest is lost (and reported).
   */
  async close(graceMs: number): Promise<void> {
    this.#stopped = true;
    this.#notify();
    await raceTimer(this.#running, graceMs);
    if (!this.empty && this.#backlog.bytes === 0) {
      this.#options.onError(
        this.name,
        new Error(
          `${this.#backlog.events} audit events for sink ${this.name} were not delivered before it closed`,
        ),
      );
    }
    await Promise.allSettled([...this.#retired.splice(0), this.#sink].map((sink) => sink.close?.()));
    await this.#backlog.close();
  }

  #state(): SinkState {
    if (this.#droppedInStreak > 0) return "spool_full";
    if (this.#failingSince !== undefined) {
      return this.#options.now() - this.#failingSince >= this.#options.failingLimitMs
        ? "failing"
        : "retrying";
    }
    return this.#backlog.events >= this.#options.behindEvents ? "behind" : "ok";
  }

  #resetSignal(): void {
    this.#changed = new Promise<void>((resolve) => {
      this.#signal = resolve;
    });
  }

  #notify(): void {
    const signal = this.#signal;
    this.#resetSignal();
    signal();
  }

  async #run(): Promise<void> {
    try {
      await this.#backlog.ready();
    } catch (error) {
      this.#broken = true;
      this.#failingSince = Number.NEGATIVE_INFINITY;
      this.#options.onError(this.name, error);
      // What was handed over before the failure showed can no longer be written anywhere: lost, and counted as such.
      const lost = this.#backlog.events;
      if (lost > 0) {
        this.#dropped += lost;
        this.#droppedInStreak += lost;
        this.#options.onDropped(this.name, lost, true);
      }
      return;
    }
    this.#notify();
    while (!this.#stopped) {
      const changed = this.#changed;
      if (this.#backlog.events === 0) {
        this.#waitingSince = undefined;
        await changed;
        continue;
      }
      if (this.#hurry === 0 && this.#options.lingerMs > 0 && this.#backlog.events < this.#options.batchSize) {
        this.#waitingSince ??= this.#options.now();
        const left = this.#options.lingerMs - (this.#options.now() - this.#waitingSince);
        if (left > 0) {
          await raceTimer(changed, left);
          continue;
        }
      }
      const gate = this.#options.gate;
      if (this.#hurry === 0 && gate !== undefined && !gate.open) {
        this.#heldAtGate = true;
        await Promise.race([changed, gate.whenOpen()]);
        this.#heldAtGate = false;
        continue;
      }
      let batch: BacklogBatch;
      try {
        batch = await this.#backlog.read(this.#options.batchSize);
      } catch (error) {
        this.#options.onError(this.name, error);
        await raceTimer(changed, this.#options.backoff.capMs);
        continue;
      }
      if (batch.lines === 0) {
        // Appended but not yet written to the spool: the append wakes us.
        await changed;
        continue;
      }
      if (!(await this.#deliver(batch))) break;
      await this.#backlog.ack(batch).catch((error: unknown) => this.#options.onError(this.name, error));
      this.#waitingSince = this.#backlog.events > 0 ? this.#options.now() : undefined;
      this.#notify();
    }
  }

  /**
   * Retries until the sink took every event or refused the rest for good; false when stopped first. A spool's batch
   * stays the text it was read as for as long as the sink takes lines and nothing of it was accepted.
   */
  async #deliver(batch: BacklogBatch): Promise<boolean> {
    let text = batch.text;
    let pending: readonly ChainedAuditEvent[] = batch.events ?? [];
    let count = text === undefined ? pending.length : batch.lines;
    let attempt = 0;
    while (count > 0) {
      if (this.#stopped) return false;
      const sink = this.#sink;
      try {
        if (text !== undefined && sink.writeLines !== undefined) await sink.writeLines(text, count);
        else {
          if (text !== undefined) {
            pending = parsedLines(text, (error) =>
              this.#options.onError(
                this.name,
                new Error(`an unreadable line in the spool of sink ${this.name} was skipped`, {
                  cause: error,
                }),
              ),
            );
            text = undefined;
            count = pending.length;
          }
          if (count > 0) await sink.write(pending);
        }
        this.#exported += count;
        count = 0;
      } catch (error) {
        this.#failures += 1;
        this.#failingSince ??= this.#options.now();
        const failure = error instanceof SinkWriteError ? error : undefined;
        if (failure?.remaining !== undefined) {
          this.#exported += Math.max(0, count - failure.remaining.length);
          pending = failure.remaining;
          text = undefined;
          count = pending.length;
        }
        if (failure?.permanent === true) {
          await this.#deadLetter(text ?? eventsText(pending), count, error);
          count = 0;
          break;
        }
        this.#options.onError(this.name, error);
        if (count === 0) break;
        const delay = retryDelayMs(this.#options.backoff, attempt, failure?.retryAfterMs);
        attempt += 1;
        this.#notify();
        // The wait ends early when the queue stops or the sink is replaced (an edited exporter is tried at once).
        await raceTimer(this.#interrupted(sink), delay);
      } finally {
        this.#closeRetired();
      }
    }
    this.#failingSince = undefined;
    return true;
  }

  #interrupted(sink: AuditSink): Promise<void> {
    if (this.#stopped || this.#sink !== sink) return Promise.resolve();
    return this.#changed.then(() => this.#interrupted(sink));
  }

  /** Replaced sinks, once no attempt of theirs is in flight (only the loop writes, and it just finished one). */
  #closeRetired(): void {
    for (const sink of this.#retired.splice(0)) {
      if (sink === this.#sink) continue;
      void sink.close?.().catch((error: unknown) => this.#options.onError(this.name, error));
    }
  }

  /** `text`: the refused events' JSON lines. */
  async #deadLetter(text: Buffer, count: number, error: unknown): Promise<void> {
    this.#deadLettered += count;
    const file = this.#options.deadLetterFile;
    if (file !== undefined) {
      try {
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        await appendFile(file, text, { mode: 0o600 });
      } catch (writeError) {
        this.#options.onError(this.name, writeError);
      }
    }
    this.#options.onDeadLettered(this.name, count, error);
  }
}

/** Resolves when `promise` settles or after `ms`, whichever is first; the timer never keeps the process alive. */
function raceTimer(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => {},
      () => {},
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, ms));
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
