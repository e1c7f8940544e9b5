// Which principal owns which MCP session. An upstream's Mcp-Session-Id is a bearer capability: whoever presents it
// acts in that session (calls tools, opens its GET stream, resumes it with Last-Event-ID and reads earlier results,
// deletes it). So the gateway records the owner when the upstream issues the id, and a request presenting an id is
// forwarded only for that owner. The record lives in the KV store, so every gateway replica enforces it.
//
// Keys are scoped by owner: `svc:session:{<owner>}:<session>`. A request from anyone else looks up a key that does not
// exist, which is exactly the answer for an unknown session (404): the gateway cannot tell, and so cannot leak,
// whether the id belongs to somebody else or to nobody. Each replica remembers the sessions it has confirmed, so a
// busy session costs one KV round trip per replica per refresh interval, not one per request.
import { createHash } from "node:crypto";
import { type KvStore, KvUnavailableError } from "../kv/kv-store.ts";
import { sessionEnd, sessionStep } from "./session-script.ts";

export interface SessionLimits {
  /** A session unused this long is forgotten (the client then gets 404 and initializes again). */
  idleTtlMs: number;
  /** Open sessions per principal and server. */
  maxPerOwner: number;
}

/** `owned`: forward; `unknown`: 404 like an unknown session; `unchecked`: the store is unreachable. */
export type SessionCheck = "owned" | "unknown" | "unchecked";
/** `bound`: recorded; `at_cap`: the owner has too many sessions; `unchecked`: the store is unreachable. */
export type SessionBind = "bound" | "at_cap" | "unchecked";

/** Confirmed sessions remembered per replica; beyond it the oldest are forgotten (and re-checked in the store). */
const CONFIRMED_CAPACITY = 100_000;

export class SessionRegistry {
  readonly #store: KvStore;
  readonly #limits: SessionLimits;
  readonly #now: () => number;
  /** binding key → when this replica last restarted the session's idle time in the store. */
  readonly #confirmed = new Map<string, number>();

  constructor(store: KvStore, limits: SessionLimits, now: () => number = Date.now) {
    this.#store = store;
    this.#limits = limits;
    this.#now = now;
  }

  get limits(): SessionLimits {
    return this.#limits;
  }

  /**
   * Records a session id the upstream just issued as `owner`'s (owner: principalKey). With the store unreachable the
   * session is remembered by this replica only (`unchecked`): it works here, and elsewhere it is refused with 503
   * until the store is back, when it becomes unknown (404) and the client starts a new one. Never admitted for
   * anyone but its owner either way.
   */
  async bind(server: string, sessionId: string, owner: string): Promise<SessionBind> {
    const result = await this.#step(server, sessionId, owner, "bind");
    if (result === "unchecked") {
      this.#remember(this.#keys(server, sessionId, owner).binding, this.#now());
      return "unchecked";
    }
    return result === -1 ? "at_cap" : "bound";
  }

  /** Whether `owner` may use `sessionId` on `server`; restarts its idle time (at most every tenth of the TTL). */
  async check(server: string, sessionId: string, owner: string): Promise<SessionCheck> {
    const keys = this.#keys(server, sessionId, owner);
    const confirmedAt = this.#confirmed.get(keys.binding);
    const now = this.#now();
    if (confirmedAt !== undefined && now - confirmedAt < this.#limits.idleTtlMs / 10) return "owned";
    const result = await this.#step(server, sessionId, owner, "touch");
    // The owner never changes, so a session this replica confirmed stays the owner's while the store is down.
    if (result === "unchecked") return confirmedAt === undefined ? "unchecked" : "owned";
    return result === 1 ? "owned" : "unknown";
  }

  /** The session ended (DELETE answered, or the upstream no longer knows it): frees its place under the cap. */
  async end(server: string, sessionId: string, owner: string): Promise<void> {
    const keys = this.#keys(server, sessionId, owner);
    this.#confirmed.delete(keys.binding);
    try {
      await this.#store.eval(sessionEnd, [keys.binding, keys.list], [keys.session]);
    } catch (error) {
      // Not recorded: the session expires with its idle TTL instead.
      if (!(error instanceof KvUnavailableError)) throw error;
    }
  }

  async #step(
    server: string,
    sessionId: string,
    owner: string,
    mode: "bind" | "touch",
  ): Promise<number | "unchecked"> {
    const keys = this.#keys(server, sessionId, owner);
    const now = this.#now();
    let result: number;
    try {
      result = await this.#store.eval(
        sessionStep,
        [keys.binding, keys.list],
        [keys.session, String(now), String(this.#limits.idleTtlMs), String(this.#limits.maxPerOwner), mode],
      );
    } catch (error) {
      if (error instanceof KvUnavailableError) return "unchecked";
      throw error;
    }
    if (result === 1) this.#remember(keys.binding, now);
    else this.#confirmed.delete(keys.binding);
    return result;
  }

  #remember(binding: string, now: number): void {
    this.#confirmed.delete(binding);
    this.#confirmed.set(binding, now);
    if (this.#confirmed.size > CONFIRMED_CAPACITY) {
      const oldest = this.#confirmed.keys().next().value;
      if (oldest !== undefined) this.#confirmed.delete(oldest);
    }
  }

  #keys(
    server: string,
    sessionId: string,
    owner: string,
  ): { binding: string; list: string; session: string } {
    const serverHash = hash(server);
    const session = hash(`${server}\u0000${sessionId}`);
    return {
      binding: `svc:session:{${owner}}:${session}`,
      list: `svc:sessions:{${owner}}:${serverHash}`,
      session,
    };
  }
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/** The replay namespace of one session as seen by one owner: request ids are unique per session (MCP). */
export function sessionScope(server: string, sessionId: string, owner: string): string {
  return hash(`${owner}\u0000${server}\u0000${sessionId}`);
}
