import { createHash } from "node:crypto";
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from "jose";
import { ACCEPTED_ALGORITHMS } from "../identity/token-verifier.ts";
import { type KvStore, KvUnavailableError } from "../kv/kv-store.ts";

export type ReplayVerdict = "first" | "replay" | "unchecked";

/** How long a DPoP proof's iat may differ from now, in either direction (RFC 9449 leaves it to the server). */
export const DPOP_WINDOW_SECONDS = 300;

/**
 * Replay protection (see gateway/docs/access.md for exactly what it covers):
 * - a JSON-RPC request id reused within one MCP session is refused, which MCP forbids anyway;
 * - a DPoP proof's `jti` is single-use within the proof's time window.
 * Keys live in the KV store so every gateway replica sees them; an unreachable store answers `unchecked`.
 */
export class ReplayGuard {
  readonly #store: KvStore;
  readonly #sessionTtlMs: number;
  readonly #now: () => number;

  constructor(store: KvStore, options: { sessionTtlMs?: number; now?: () => number } = {}) {
    this.#store = store;
    this.#sessionTtlMs = options.sessionTtlMs ?? 24 * 60 * 60 * 1000;
    this.#now = options.now ?? Date.now;
  }

  /** `1` and `"1"` are different JSON-RPC ids, so the type is part of the key. */
  requestId(server: string, sessionId: string, id: string | number): Promise<ReplayVerdict> {
    const session = createHash("sha256").update(`${server}\u0000${sessionId}`).digest("hex").slice(0, 32);
    return this.#firstUse(`svc:replay:${session}:${typeof id}:${id}`, this.#sessionTtlMs);
  }

  /**
   * Verifies a DPoP proof (RFC 9449 section 4.3: typ, asymmetric alg, signature with its embedded public key, htm,
   * htu, iat window, jti) and spends its jti. Returns a reason string when the proof is invalid.
   */
  async dpopProof(proof: string, method: string, url: string): Promise<ReplayVerdict | { invalid: string }> {
    let payload: Record<string, unknown>;
    let thumbprint: string;
    try {
      const verified = await jwtVerify(proof, EmbeddedJWK, {
        typ: "dpop+jwt",
        algorithms: ACCEPTED_ALGORITHMS,
      });
      payload = verified.payload;
      if (verified.protectedHeader.jwk === undefined) return { invalid: "the proof carries no jwk" };
      thumbprint = await calculateJwkThumbprint(verified.protectedHeader.jwk);
    } catch (error) {
      return { invalid: `the DPoP proof does not verify: ${(error as Error).message}` };
    }
    if (payload.htm !== method) return { invalid: `htm is ${String(payload.htm)}, the request is ${method}` };
    if (typeof payload.htu !== "string" || stripQuery(payload.htu) !== stripQuery(url)) {
      return { invalid: "htu does not match the request URL" };
    }
    const iat = typeof payload.iat === "number" ? payload.iat : Number.NaN;
    if (!(Math.abs(this.#now() / 1000 - iat) <= DPOP_WINDOW_SECONDS))
      return { invalid: "iat is outside the accepted window" };
    if (typeof payload.jti !== "string" || payload.jti === "") return { invalid: "the proof has no jti" };
    // Kept twice the window: a proof cannot be accepted again while its iat could still pass.
    return this.#firstUse(`svc:dpop:${thumbprint}:${payload.jti}`, DPOP_WINDOW_SECONDS * 2000);
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

/** RFC 9449: htu is compared without query and fragment. */
function stripQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url;
  }
}
