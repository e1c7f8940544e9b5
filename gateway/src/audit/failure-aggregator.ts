// Unauthenticated failures cost the sender nothing (a junk token per request), so one audit event per 401 would
// let anyone grow the audit trail without bound. They are aggregated instead, per key (source address, server,
// reason) and per window:
// - the first failure of a key in a window is recorded at once, whole (request id, method, …) with count 1, so a
//   single failure is on record as promptly as any other event;
// - the key's further failures in that window become one event at the window's end, with their count;
// - at most `maxKeys` keys per window; failures of further keys are counted in one "other sources" event at the
//   window's end (reason OTHER_SOURCES, no source, no server), with no event of their own.
// So a window writes at most 2 × maxKeys + 1 events whatever arrives, and the counts add up to the failures.
// A window opens with the first failure after the previous one closed and lasts `windowMs`; `flush` closes it
// early (AuditLog.drain, on shutdown).
import type { AuditEventInput } from "./audit-event.ts";

const KIND = "authentication_failed";

/** The reason of the event that counts the failures of keys beyond the per-window bound. */
export const OTHER_SOURCES = "other_sources";

export interface FailureAggregatorOptions {
  /** Length of a window; default 10 s. */
  windowMs?: number;
  /** Keys (source, server, reason) tracked per window; default 1000. */
  maxKeys?: number;
}

/** An authentication failure as audit-step describes it; the aggregator adds kind and count. */
export type FailureEvent = Omit<AuditEventInput, "kind" | "count">;

/** What a key's summary event repeats from its first event. */
type Summary = Pick<AuditEventInput, "source" | "server" | "reason" | "decision" | "status"> & {
  further: number;
};

export class FailureAggregator {
  readonly #record: (event: AuditEventInput) => void;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #keys = new Map<string, Summary>();
  #otherSources = 0;
  #window: NodeJS.Timeout | undefined;

  constructor(record: (event: AuditEventInput) => void, options: FailureAggregatorOptions = {}) {
    this.#record = record;
    this.#windowMs = options.windowMs ?? 10_000;
    this.#maxKeys = options.maxKeys ?? 1000;
  }

  add(event: FailureEvent): void {
    // NUL cannot occur in an address, a server name or a reason, so distinct keys never collide.
    const key = `${event.source ?? ""}\0${event.server ?? ""}\0${event.reason ?? ""}`;
    const summary = this.#keys.get(key);
    if (summary !== undefined) {
      summary.further += 1;
    } else if (this.#keys.size < this.#maxKeys) {
      const { source, server, reason, decision, status } = event;
      this.#keys.set(key, { source, server, reason, decision, status, further: 0 });
      this.#record({ ...event, kind: KIND, count: 1 });
    } else {
      this.#otherSources += 1;
    }
    // Unref'd: an open window never keeps the process alive; drain writes it out on shutdown.
    this.#window ??= setTimeout(() => this.flush(), this.#windowMs).unref();
  }

  /** Closes the current window: records each key's further failures and the other sources' as one event each. */
  flush(): void {
    clearTimeout(this.#window);
    this.#window = undefined;
    for (const { further, ...summary } of this.#keys.values()) {
      if (further > 0) this.#record({ ...summary, kind: KIND, count: further });
    }
    if (this.#otherSources > 0) {
      this.#record({
        kind: KIND,
        decision: "deny",
        reason: OTHER_SOURCES,
        count: this.#otherSources,
      });
    }
    this.#keys.clear();
    this.#otherSources = 0;
  }
}
