import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How many SSE events the server keeps for resumption, across all streams (oldest dropped first). */
export const EVENT_HISTORY_LIMIT = 10_000;

interface StoredEvent {
  id: string;
  seq: number;
  /** The session view that stored it: a Last-Event-ID from another session never matches. */
  owner: object;
  streamId: string;
  message: JSONRPCMessage;
}

/**
 * In-memory resumability (Last-Event-ID replay) for one process, shared by every session and bounded in total.
 * Events live in a ring of `limit` slots: event number `seq` sits in slot `seq % limit`, so storing one is O(1)
 * with no per-write scan or rehash (a Map used as a FIFO had to skip its deleted entries on every eviction,
 * ~20 µs per SSE event at 10 000 entries). Event ids are `<streamId>_<seq>`. A client that reconnects to another
 * replica cannot resume, so run one replica per session (sticky sessions) — README.
 */
export class MemoryEventStore {
  readonly #ring: (StoredEvent | undefined)[];
  #next = 0;

  constructor(limit = EVENT_HISTORY_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`event history limit must be >= 1: ${limit}`);
    this.#ring = new Array(limit).fill(undefined);
  }

  /**
   * The store one session's transport uses. Stream ids repeat across sessions (every standalone GET stream is
   * `_GET_stream`), so each view only finds and replays its own events.
   */
  forSession(): EventStore {
    const owner = {};
    return {
      storeEvent: async (streamId, message) => this.#store(owner, streamId, message),
      getStreamIdForEventId: async (eventId) => this.#find(owner, eventId)?.streamId,
      replayEventsAfter: async (lastEventId, { send }) => {
        const last = this.#find(owner, lastEventId);
        if (!last) throw new Error(`unknown event id ${lastEventId}`);
        const ring = this.#ring;
        // Later events may be overwritten while send() awaits; those are skipped by the seq check.
        for (let seq = last.seq + 1; seq < this.#next; seq++) {
          const event = ring[seq % ring.length];
          if (event?.seq === seq && event.owner === owner && event.streamId === last.streamId)
            await send(event.id, event.message);
        }
        return last.streamId;
      },
    };
  }

  #store(owner: object, streamId: string, message: JSONRPCMessage): string {
    const seq = this.#next++;
    const id = `${streamId}_${seq}`;
    this.#ring[seq % this.#ring.length] = { id, seq, owner, streamId, message };
    return id;
  }

  #find(owner: object, eventId: string): StoredEvent | undefined {
    const seq = Number(eventId.slice(eventId.lastIndexOf("_") + 1));
    if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
    const event = this.#ring[seq % this.#ring.length];
    return event?.id === eventId && event.owner === owner ? event : undefined;
  }
}
