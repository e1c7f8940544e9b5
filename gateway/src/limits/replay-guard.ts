import { DPOP_WINDOW_SECONDS, type DpopProof } from "../identity/dpop-proof.ts";
import { type KvStore, KvUnavailableError } from "../kv/kv-store.ts";

export type ReplayVerdict = "first" | "replay" | "unchecked";

/**
 * Replay protection (see gateway/docs/access.md for exactly what it covers):
 * - a JSON-RPC request id reused within one MCP session is refused, which MCP forbids anyway. Ids are namespaced by
 *   session and owner (`sessionScope`), and kept as long as an idle session is (SVC_SESSION_IDLE_TIMEOUT_SECONDS), so
 *   nobody else can spend a session's ids and a replay key never outlives what it protects by much;
 * - a DPoP proof's `jti` is single-use within the proof's time window.
 * Keys live in the KV store so every gateway replica sees them; an unreachable store answers `unchecked`.
 */
export class ReplayGuard {
  readonly #store: KvStore;
  readonly #sessionTtlMs: number;

  constructor(store: KvStore, options: { sessionTtlMs?: number } = {}) {
    this.#store = store;
    this.#sessionTtlMs = options.sessionTtlMs ?? 24 * 60 * 60 * 1000;
  }

  /** `scope`: sessionScope(server, session id, owner). `1` and `"1"` are different JSON-RPC ids, so the type is part of the key. */
  requestId(scope: string, id: string | number): Promise<ReplayVerdict> {
    return this.#firstUse(`svc:replay:${scope}:${typeof id}:${id}`, this.#sessionTtlMs);
  }

  /**
   * Spends a verified DPoP proof's jti (verification is authentication's: identity/dpop-proof.ts). Per key
   * thumbprint, so one client cannot burn another's jti; kept twice the iat window, so a proof cannot be accepted
   * again while its iat could still pass.
   */
  dpopJti(proof: DpopProof): Promise<ReplayVerdict> {
    return this.#firstUse(`svc:dpop:${proof.thumbprint}:${proof.jti}`, DPOP_WINDOW_SECONDS * 2000);
  }

  async #firstUse(key: string, ttlMs: number): Promise<ReplayVerdict> {
    try {
      return (await this.#store.setIfAbsent(key, "1", ttlMs)) ? "first" : "replay";
    } catch (error) {
      if (error instanceof KvUnavailableError) return "unchecked";
      throw error;
    }
  }
}
