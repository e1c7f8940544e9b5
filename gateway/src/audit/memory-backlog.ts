// The backlog of a local sink (stdout, the SVC_AUDIT_FILE file): in memory only, since the target is this machine's own
// output and a spool on the same disk would add nothing. Bounded in events; past the bound the caller counts the events
// that did not fit as dropped.
import type { ChainedAuditEvent } from "./audit-event.ts";

/**
 * A batch read from a backlog: the events themselves (in memory), or their JSON lines as a spool holds them, which a
 * sink that takes lines sends on as they are and any other parses (event-json.ts, parsedLines).
 */
export type BacklogBatch =
  | { events: ChainedAuditEvent[]; text?: undefined; lines: number }
  | {
      /** `lines` events' JSON, each ending in a newline. */
      text: Buffer;
      events?: undefined;
      lines: number;
    };

/** What a sink's queue reads from: this in-memory list, or the on-disk Spool. */
export interface Backlog<Batch extends BacklogBatch = BacklogBatch> {
  readonly events: number;
  readonly bytes: number;
  /** Appended but not yet readable. */
  readonly pendingEvents: number;
  /** Set by the queue: appended events have become readable. */
  onWritten: (() => void) | undefined;
  ready(): Promise<void>;
  /** Takes as many events as fit, from the start of the batch; returns how many. */
  append(events: readonly ChainedAuditEvent[]): number;
  read(max: number): Promise<Batch>;
  ack(batch: Batch): Promise<void>;
  close(): Promise<void>;
}

export class MemoryBacklog implements Backlog {
  readonly #events: ChainedAuditEvent[] = [];
  readonly #capacity: number;
  onWritten: (() => void) | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get events(): number {
    return this.#events.length;
  }

  get bytes(): number {
    return 0;
  }

  get pendingEvents(): number {
    return 0;
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  append(events: readonly ChainedAuditEvent[]): number {
    const taken = Math.max(0, Math.min(events.length, this.#capacity - this.#events.length));
    for (let i = 0; i < taken; i++) this.#events.push(events[i] as ChainedAuditEvent);
    return taken;
  }

  async read(max: number): Promise<BacklogBatch> {
    const events = this.#events.slice(0, max);
    return { events, lines: events.length };
  }

  async ack(batch: BacklogBatch): Promise<void> {
    this.#events.splice(0, batch.lines);
  }

  async close(): Promise<void> {}
}
