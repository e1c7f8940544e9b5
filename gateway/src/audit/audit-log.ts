import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type AuditEventInput, type ChainedAuditEvent, completeEvent } from "./audit-event.ts";
import { type BackoffPolicy, DEFAULT_BACKOFF } from "./backoff.ts";
import { eventsText } from "./event-json.ts";
import { FailureAggregator, type FailureAggregatorOptions, type FailureEvent } from "./failure-aggregator.ts";
import { HashChain } from "./hash-chain.ts";
import { type Backlog, MemoryBacklog } from "./memory-backlog.ts";
import type { AuditSink } from "./sink.ts";
import { type DeliveryGate, SinkQueue, type SinkStatus } from "./sink-queue.ts";
import { Spool, spoolDirName } from "./spool.ts";

export type { AuditSink } from "./sink.ts";

/** Sinks whose target is this machine's own output: their backlog stays in memory, the others are spooled to disk. */
const LOCAL_SINKS = new Set(["stdout", "file"]);

export interface AuditSpoolOptions {
  /** One subdirectory per spooled sink (spool.ts). */
  dir: string;
  /** Cap on each sink's undelivered bytes. */
  maxBytes: number;
  /** A new segment file is started past this size (spool.ts; default min(16 MiB, maxBytes / 4)). */
  segmentBytes?: number;
}

export interface AuditLogOptions {
  gateway: string;
  sinks: AuditSink[];
  /** Events recorded but not yet chained; beyond it new events are dropped and the drop is itself recorded. */
  capacity?: number;
  batchSize?: number;
  /** How long a sink's partial batch waits for more events (exporters; local sinks send at once). Default 1 s. */
  lingerMs?: number;
  /** First retry delay after a sink fails (full jitter up to it, doubling up to `retryCapMs`). */
  retryDelayMs?: number;
  retryCapMs?: number;
  instance?: string;
  onSinkError?: (error: unknown, sink: string) => void;
  /** Events dropped for a sink whose backlog is at its cap: meant to be logged loudly. */
  onDropped?: (sink: string, count: number) => void;
  /** How authentication failures are aggregated (failure-aggregator.ts); the defaults are the documented ones. */
  failures?: FailureAggregatorOptions;
  /** Without it every sink's backlog is in memory (tests, `svc-gateway` tools); the gateway always sets it. */
  spool?: AuditSpoolOptions;
  /** Asked before each batch of a spooled sink (defer-under-load.ts): while closed, exports wait in their spools. */
  exportGate?: DeliveryGate;
  /** Cap on a local (in-memory) sink's backlog, in events. */
  memoryBacklog?: number;
  /** A sink that fails every attempt this long makes the gateway UNHEALTHY. Default 5 minutes. */
  failingLimitMs?: number;
  /** A sink this many events behind is DEGRADED even while its attempts succeed. Default 10 000. */
  behindEvents?: number;
  /** How long a removed sink may go on delivering before it is closed. Default 5 s. */
  removalFlushMs?: number;
  /** Clock for health (how long a sink has been failing), lingering and drain deadlines. */
  now?: () => number;
}

/**
 * The audit trail, kept off the request path: `record` only queues (no I/O, no hashing); a background flush links
 * events into this instance's hash chain, once and in order, and hands the same chained events to every sink's own
 * queue (sink-queue.ts), which batches, retries and, for exporters, spools them to disk first.
 */
export class AuditLog {
  readonly #queue: AuditEventInput[] = [];
  readonly #chain: HashChain;
  readonly #options: AuditLogOptions;
  readonly #failures: FailureAggregator;
  readonly #sinkQueues = new Map<string, SinkQueue>();
  /** Queues being closed, by sink name: a sink added again under that name waits for its spool to be let go. */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #now: () => number;
  readonly #backoff: BackoffPolicy;
  #dropped = 0;
  #droppedTotal = 0;
  #scheduled = false;

  constructor(options: AuditLogOptions) {
    this.#chain = new HashChain(options.instance ?? randomUUID());
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#backoff = {
      ...DEFAULT_BACKOFF,
      baseMs: options.retryDelayMs ?? DEFAULT_BACKOFF.baseMs,
      capMs: options.retryCapMs ?? DEFAULT_BACKOFF.capMs,
    };
    this.#failures = new FailureAggregator((event) => this.record(event), options.failures);
    this.setSinks(options.sinks);
  }

  get instance(): string {
    return this.#chain.instance;
  }

  /** Events dropped because the record queue was full, since start (for the metrics endpoint). */
  get droppedTotal(): number {
    return this.#droppedTotal;
  }

  record(event: AuditEventInput): void {
    if (this.#queue.length >= (this.#options.capacity ?? 10_000)) {
      this.#dropped += 1;
      this.#droppedTotal += 1;
    } else {
      this.#queue.push({ time: new Date(this.#now()).toISOString(), ...event });
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  /**
   * A 401 (`authentication_failed`): aggregated per source, server and reason, because anyone can send them
   * for free (failure-aggregator.ts).
   */
  recordAuthenticationFailure(event: FailureEvent): void {
    this.#failures.add(event);
  }

  /**
   * Makes these the sinks (on start and on every config reload), matched by name: a new name gets a queue (replaying
   * its spool first), a known name with another sink object gets that sink for its next attempt and keeps its backlog
   * (an edited exporter), a name no longer there is closed: it gets `removalFlushMs` (5 s) to deliver, and what is left stays in its spool until an exporter of that type and name is configured again.
   */
  setSinks(sinks: readonly AuditSink[]): void {
    const wanted = new Map(sinks.map((sink) => [sink.name, sink]));
    for (const [name, queue] of this.#sinkQueues) {
      if (wanted.has(name)) continue;
      this.#sinkQueues.delete(name);
      const closing = (async () => {
        await queue.flush(this.#now() + (this.#options.removalFlushMs ?? 5000));
        await queue.close(1000);
      })().finally(() => {
        if (this.#closing.get(name) === closing) this.#closing.delete(name);
      });
      this.#closing.set(name, closing);
    }
    for (const [name, sink] of wanted) {
      const queue = this.#sinkQueues.get(name);
      if (queue === undefined) this.#sinkQueues.set(name, this.#queueFor(sink));
      else queue.replaceSink(sink);
    }
  }

  /** Each sink's state and backlog, for /health and /metrics. */
  sinkStatus(): SinkStatus[] {
    return [...this.#sinkQueues.values()].map((queue) => queue.status());
  }

  /**
   * Resolves when everything recorded so far has been delivered to every sink (tests, tools), the authentication
   * failures counted in the open aggregation window included: that window is closed now. Unbounded: a sink that
   * never recovers keeps it waiting; shutdown uses close() instead.
   */
  async drain(): Promise<void> {
    this.#failures.flush();
    this.#flush();
    await Promise.all([...this.#sinkQueues.values()].map((queue) => queue.flush()));
  }

  /**
   * Shutdown: delivers what it can until `deadlineMs` from now, then closes every sink. Spooled events not delivered
   * stay on disk and are replayed first on the next start; a local sink's undelivered rest is reported as lost.
   */
  async close(deadlineMs: number): Promise<void> {
    this.#failures.flush();
    this.#flush();
    const deadline = this.#now() + deadlineMs;
    const queues = [...this.#sinkQueues.values()];
    this.#sinkQueues.clear();
    await Promise.all(queues.map((queue) => queue.flush(deadline)));
    await Promise.all([...queues.map((queue) => queue.close(1000)), ...this.#closing.values()]);
  }

  #queueFor(sink: AuditSink): SinkQueue {
    const spool = this.#options.spool;
    const onError = this.#options.onSinkError ?? (() => {});
    const spooled = spool !== undefined && !LOCAL_SINKS.has(sink.name);
    const after = this.#closing.get(sink.name) ?? Promise.resolve();
    const dir = spool === undefined ? undefined : join(spool.dir, spoolDirName(sink.name));
    const backlog: Backlog =
      spooled && dir !== undefined
        ? new Spool(
            {
              dir,
              maxBytes: spool.maxBytes,
              segmentBytes: spool.segmentBytes,
              onError: (error) => onError(error, sink.name),
            },
            after,
          )
        : new MemoryBacklog(this.#options.memoryBacklog ?? 100_000);
    return new SinkQueue({
      sink,
      backlog,
      batchSize: this.#options.batchSize ?? 256,
      lingerMs: spooled ? (this.#options.lingerMs ?? 1000) : 0,
      gate: spooled ? this.#options.exportGate : undefined,
      backoff: this.#backoff,
      now: this.#now,
      failingLimitMs: this.#options.failingLimitMs ?? 5 * 60_000,
      behindEvents: this.#options.behindEvents ?? 10_000,
      deadLetterFile: dir === undefined ? undefined : join(dir, "dead-letter.jsonl"),
      onError: (name, error) => onError(error, name),
      onDropped: (name, count, streakStart) => {
        this.#options.onDropped?.(name, count);
        // The loss goes on the record once when it starts and once with the total when the sink accepts again.
        if (streakStart) {
          this.record({
            kind: "events_dropped",
            reason: `audit events dropped for sink ${name}: its backlog is at its cap`,
            count,
          });
        }
      },
      onDropStreakEnd: (name, count) =>
        this.record({
          kind: "events_dropped",
          reason: `${count} audit events were dropped for sink ${name} while its backlog was at its cap`,
          count,
        }),
      onDeadLettered: (name, count, error) =>
        onError(
          new Error(`${count} audit events refused for good by sink ${name}, moved to its dead-letter file`, {
            cause: error,
          }),
          name,
        ),
    });
  }

  #flush(): void {
    this.#scheduled = false;
    while (this.#queue.length > 0 || this.#dropped > 0) {
      const batch = this.#nextBatch();
      for (const queue of this.#sinkQueues.values()) queue.enqueue(batch);
    }
  }

  #nextBatch(): ChainedAuditEvent[] {
    const batchSize = this.#options.batchSize ?? 256;
    const inputs = this.#queue.splice(0, batchSize);
    if (this.#dropped > 0 && inputs.length < batchSize) {
      // The loss goes on the record in the chain, in the place where it happened.
      inputs.push({
        kind: "events_dropped",
        reason: `${this.#dropped} audit events dropped: the queue was full`,
        count: this.#dropped,
      });
      this.#dropped = 0;
    }
    const now = new Date(this.#now());
    return inputs.map((input) => this.#chain.link(completeEvent(input, this.#options.gateway, now)));
  }
}

/** JSON lines on a stream (stdout by default), one event per line. */
export function streamSink(stream: NodeJS.WritableStream = process.stdout, name = "stdout"): AuditSink {
  return {
    name,
    write: (batch) =>
      new Promise<void>((resolve, reject) => {
        stream.write(eventsText(batch), (error) => (error ? reject(error) : resolve()));
      }),
  };
}
