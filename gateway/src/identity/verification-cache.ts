import { hash } from "node:crypto";
import type { Principal } from "./principal.ts";

/**
 * Verified tokens by SHA-256 of the token (the token itself is never kept as a key), until they expire, so a hot
 * token costs a hash and a map lookup instead of a signature check. Bounded: the oldest entry goes first.
 */
export class VerificationCache {
  readonly #entries = new Map<string, Principal>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  // Every request with a token pays this: the one-shot hash() skips building a Hash object, which costs more than
  // hashing a token of a few hundred bytes.
  static keyOf(token: string): string {
    return hash("sha256", token, "base64url");
  }

  get(key: string, nowSeconds: number): Principal | undefined {
    const principal = this.#entries.get(key);
    if (principal === undefined) return undefined;
    if (principal.expiresAt <= nowSeconds) {
      this.#entries.delete(key);
      return undefined;
    }
    return principal;
  }

  set(key: string, principal: Principal): void {
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, principal);
  }

  get size(): number {
    return this.#entries.size;
  }
}
