import { hash } from "node:crypto";

/**
 * A caller's stable key for shared state (rate-limit counters, session ownership, replay ids): identity provider +
 * subject, hashed, so the KV store never holds user identifiers. Two providers may issue the same `sub` for different
 * people, which is why the provider is part of it.
 */
export function principalKey(principal: { idp: string; sub: string }): string {
  let key = keys.get(principal);
  if (key === undefined) {
    key = hash("sha256", `${principal.idp}\u0000${principal.sub}`, "hex").slice(0, 32);
    keys.set(principal, key);
  }
  return key;
}

/**
 * Per principal object: the token verifier caches a token's principal and anonymous access has one, so the hash runs
 * once per token rather than once per request. Held weakly: a key goes with its principal. Principals are not
 * mutated (a change of groups makes a new object), and idp and sub never change.
 */
const keys = new WeakMap<object, string>();
