// A sink the test steers: it fails while told to (plain error, SinkWriteError with Retry-After / remaining /
// permanent), or blocks until released, and keeps what it accepted. A plain AuditSink object: that is the contract the
// audit log delivers to, so this is a real participant, not a stand-in for one of our modules.

import { vi } from "vitest";
import type { ChainedAuditEvent } from "../../../src/audit/audit-event.ts";
import { type AuditSink, SinkWriteError } from "../../../src/audit/sink.ts";

export type Failure = (batch: readonly ChainedAuditEvent[]) => Error | undefined;

export class TestSink implements AuditSink {
  readonly name: string;
  readonly received: ChainedAuditEvent[] = [];
  /** Every write's batch, accepted or not, with when it started (Date.now()). */
  readonly attempts: Array<{ size: number; at: number; firstSeq: number | undefined }> = [];
  closed = false;
  #failures: Failure[] = [];
  #down = false;
  #gate: Promise<void> | undefined;
  #release: (() => void) | undefined;

  constructor(name: string) {
    this.name = name;
  }

  /** The next writes fail as given, one entry per write. */
  failNext(...failures: Failure[]): this {
    this.#failures.push(...failures);
    return this;
  }

  /** Every write fails until up(). */
  down(): this {
    this.#down = true;
    return this;
  }

  up(): this {
    this.#down = false;
    return this;
  }

  /** Writes hang until release(): a sink that is slow or whose receiver never answers. */
  block(): this {
    this.#gate = new Promise((resolve) => {
      this.#release = resolve;
    });
    return this;
  }

  release(): void {
    this.#release?.();
    this.#gate = undefined;
  }

  async write(batch: readonly ChainedAuditEvent[]): Promise<void> {
    this.attempts.push({ size: batch.length, at: Date.now(), firstSeq: batch[0]?.seq });
    if (this.#gate !== undefined) await this.#gate;
    if (this.#down) throw new Error(`${this.name} is down`);
    const failure = this.#failures.shift()?.(batch);
    if (failure !== undefined) {
      if (failure instanceof SinkWriteError && failure.remaining !== undefined && !failure.permanent) {
        const left = new Set(failure.remaining);
        this.received.push(...batch.filter((event) => !left.has(event)));
      }
      throw failure;
    }
    this.received.push(...batch);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export const plainError: Failure = () => new Error("connection refused");
export const retryAfter =
  (ms: number): Failure =>
  () =>
    new SinkWriteError("429 too many requests", { retryAfterMs: ms });
/** The receiver took every other event; the rest (in order) is left. */
export const everyOtherLeft: Failure = (batch) => {
  const remaining = batch.filter((_, i) => i % 2 === 1);
  return new SinkWriteError("partial failure", { remaining });
};
export const permanent: Failure = () => new SinkWriteError("mapping conflict", { permanent: true });

/** Sequence numbers, to compare what arrived with what was recorded. */
export const seqs = (events: readonly ChainedAuditEvent[]): number[] => events.map((event) => event.seq);
export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

/**
 * vi.waitFor with room for a loaded machine (its default gives up after 1 s, less than an exporter's linger time plus
 * a retry): polls the condition every 10 ms for up to 10 s.
 */
export function waitFor<T>(
  condition: () => T | Promise<T>,
  options: { timeout?: number; interval?: number } = {},
): Promise<T> {
  return vi.waitFor(condition, { timeout: 10_000, interval: 10, ...options });
}
