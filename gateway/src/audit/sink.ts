// Where chained audit events are delivered: stdout, a file, or an exporter (search index, OTLP, SIEM). Each sink gets
// its own queue in the audit log, so a slow or dead one never stalls or duplicates events into another. A sink only
// writes one batch and says how it went; batching, retries, backoff and the on-disk spool belong to the queue.
import type { ChainedAuditEvent } from "./audit-event.ts";

export interface AuditSink {
  /** For /health, metrics and logs: `stdout`, `file`, `search_index:<name>`, `otel:<name>`, `siem:<name>`. */
  readonly name: string;
  /**
   * Delivers one batch, in order. Resolves when every event is accepted by the receiver. Throws SinkWriteError (or
   * any error, meaning: retry the whole batch) when some or all of it was not.
   */
  write(batch: readonly ChainedAuditEvent[]): Promise<void>;
  /**
   * Delivers `lines` events given as their JSON lines, as a spool holds them (each ending in a newline), without the
   * caller parsing them: for a sink that sends them on as text (the export process). Fails like `write`; a
   * SinkWriteError's `remaining` holds the events still to deliver. Without it, spooled batches are parsed for `write`.
   */
  writeLines?(text: Buffer, lines: number): Promise<void>;
  /** Flushes and releases what the sink holds (clients, sockets, files) when it is removed or the gateway stops. */
  close?(): Promise<void>;
}

/** A batch was not (wholly) delivered: what is left to retry and when the receiver asked to be called again. */
export class SinkWriteError extends Error {
  /** The events still to deliver, in order; the whole batch when undefined. */
  readonly remaining: readonly ChainedAuditEvent[] | undefined;
  /** From the receiver's Retry-After (or its equivalent): wait at least this long before the next attempt. */
  readonly retryAfterMs: number | undefined;
  /** The receiver refused the events for good (e.g. a mapping conflict): retrying cannot help. */
  readonly permanent: boolean;

  constructor(
    message: string,
    options: {
      remaining?: readonly ChainedAuditEvent[];
      retryAfterMs?: number;
      permanent?: boolean;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "SinkWriteError";
    this.remaining = options.remaining;
    this.retryAfterMs = options.retryAfterMs;
    this.permanent = options.permanent ?? false;
  }
}
