// Which upstream instance holds an MCP session, in the KV store so every gateway replica routes the session there.
// Written when the instance issues the session id; kept as long as the session may idle; read on every request of
// the session (one KV round trip, beside the ownership check). Keys hold a hash of the session id, never the id.
import { createHash } from "node:crypto";
import type { KvStore } from "../kv/index.ts";

export class SessionPins {
  readonly #kv: KvStore;
  readonly #ttlMs: number;

  constructor(kv: KvStore, ttlMs: number) {
    this.#kv = kv;
    this.#ttlMs = ttlMs;
  }

  pin(server: string, sessionId: string, origin: string): Promise<void> {
    return this.#kv.set(keyOf(server, sessionId), origin, this.#ttlMs);
  }

  /** The pinned instance, or undefined when the session has none (never pinned, expired, or its instance is gone). */
  async pinned(server: string, sessionId: string): Promise<string | undefined> {
    const key = keyOf(server, sessionId);
    const origin = await this.#kv.get(key);
    if (origin === null) return undefined;
    // Used: keep it as long as the session lives (fire and forget: the next request rewrites it anyway).
    void this.#kv.set(key, origin, this.#ttlMs).catch(() => {});
    return origin;
  }

  unpin(server: string, sessionId: string): Promise<void> {
    return this.#kv.delete(keyOf(server, sessionId));
  }
}

function keyOf(server: string, sessionId: string): string {
  return `pin:${server}:${createHash("sha256").update(sessionId).digest("base64url")}`;
}
