import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How many SSE events the server keeps for resumption, across all streams (oldest dropped first). */
export const EVENT_HISTORY_LIMIT = 10_000;

/**
 * In-memory resumability (Last-Event-ID replay) for one process. Event ids are `<streamId>_<n>`; a client that
 * reconnects to another replica cannot resume, so run one replica per session (sticky sessions) — README.
 */
export class MemoryEventStore implements EventStore {
  #events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  #counter = 0;
  readonly #limit: number;

  constructor(limit = EVENT_HISTORY_LIMIT) {
    this.#limit = limit;
  }

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = `${streamId}_${++this.#counter}`;
    this.#events.set(eventId, { streamId, message });
    if (this.#events.size > this.#limit) {
      const oldest = this.#events.keys().next().value;
      if (oldest !== undefined) this.#events.delete(oldest);
    }
    return eventId;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.#events.get(eventId)?.streamId;
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) throw new Error(`unknown event id ${lastEventId}`);
    let after = false;
    for (const [eventId, event] of this.#events) {
      if (eventId === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.streamId === last.streamId) await send(eventId, event.message);
    }
    return last.streamId;
  }
}
