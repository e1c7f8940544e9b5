import { randomUUID } from "node:crypto";
import { type AuditEventInput, type ChainedAuditEvent, completeEvent } from "./audit-event.ts";
import { FailureAggregator, type FailureAggregatorOptions, type FailureEvent } from "./failure-aggregator.ts";
import { HashChain } from "./hash-chain.ts";

/** Where chained events go: stdout by default; search-index, OTLP and SIEM exporters plug in here later. */
export interface AuditSink {
  write(batch: readonly ChainedAuditEvent[]): Promise<void>;
}

export interface AuditLogOptions {
  gateway: string;
  sinks: AuditSink[];
  /** Events waiting to be written; beyond it new events are dropped and the drop is itself recorded. */
  capacity?: number;
  batchSize?: number;
  /** First retry delay after a sink fails; doubles up to 30 s. */
  retryDelayMs?: number;
  instance?: string;
  onSinkError?: (error: unknown) => void;
  /** How authentication failures are aggregated (failure-aggregator.ts); the defaults are the documented ones. */
  failures?: FailureAggregatorOptions;
}

/**
 * The audit trail, kept off the request path: `record` only queues (no I/O, no hashing); a background flush links
 * events into this instance's hash chain and hands batches to every sink, retrying a failed batch so nothing is
 * lost while the queue has room.
 */
export class AuditLog {
  readonly #queue: AuditEventInput[] = [];
  readonly #chain: HashChain;
  readonly #options: Required<Omit<AuditLogOptions, "instance" | "onSinkError" | "failures">> &
    Pick<AuditLogOptions, "onSinkError">;
  readonly #failures: FailureAggregator;
  #dropped = 0;
  #droppedTotal = 0;
  #flushing: Promise<void> | undefined;
  #pending: ChainedAuditEvent[] = [];

  constructor(options: AuditLogOptions) {
    this.#chain = new HashChain(options.instance ?? randomUUID());
    this.#options = { capacity: 10_000, batchSize: 256, retryDelayMs: 200, ...options };
    this.#failures = new FailureAggregator((event) => this.record(event), options.failures);
  }

  get instance(): string {
    return this.#chain.instance;
  }

  /** Events dropped because the queue was full, since start (for the metrics endpoint). */
  get droppedTotal(): number {
    return this.#droppedTotal;
  }

  record(event: AuditEventInput): void {
    if (this.#queue.length >= this.#options.capacity) {
      this.#dropped += 1;
      this.#droppedTotal += 1;
    } else {
      this.#queue.push({ time: new Date().toISOString(), ...event });
    }
    this.#flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#flush());
  }

  /**
   * A 401 (`authentication_failed`): aggregated per source, server and reason, because anyone can send them
   * for free (failure-aggregator.ts).
   */
  recordAuthenticationFailure(event: FailureEvent): void {
    this.#failures.add(event);
  }

  /**
   * Resolves when everything recorded so far has been written (shutdown waits on it), the authentication failures
   * counted in the open aggregation window included: that window is closed now.
   */
  async drain(): Promise<void> {
    this.#failures.flush();
    while (this.#flushing !== undefined) await this.#flushing;
  }

  async #flush(): Promise<void> {
    try {
      let delay = this.#options.retryDelayMs;
      while (this.#queue.length > 0 || this.#pending.length > 0 || this.#dropped > 0) {
        if (this.#pending.length === 0) this.#pending = this.#nextBatch();
        try {
          await Promise.all(this.#options.sinks.map((sink) => sink.write(this.#pending)));
          this.#pending = [];
          delay = this.#options.retryDelayMs;
        } catch (error) {
          this.#options.onSinkError?.(error);
          await new Promise((resolve) => setTimeout(resolve, delay));
          delay = Math.min(delay * 2, 30_000);
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  #nextBatch(): ChainedAuditEvent[] {
    const inputs = this.#queue.splice(0, this.#options.batchSize);
    if (this.#dropped > 0 && inputs.length < this.#options.batchSize) {
      // The loss goes on the record in the chain, in the place where it happened.
      inputs.push({
        kind: "events_dropped",
        reason: `${this.#dropped} audit events dropped: the queue was full`,
        count: this.#dropped,
      });
      this.#dropped = 0;
    }
    return inputs.map((input) => this.#chain.link(completeEvent(input, this.#options.gateway)));
  }
}

/** JSON lines on a stream (stdout by default), one event per line. */
export function streamSink(stream: NodeJS.WritableStream = process.stdout): AuditSink {
  return {
    write: (batch) =>
      new Promise<void>((resolve, reject) => {
        const text = batch.map((event) => `${JSON.stringify(event)}\n`).join("");
        stream.write(text, (error) => (error ? reject(error) : resolve()));
      }),
  };
}
