import { createHash } from "node:crypto";

/**
 * A caller's stable key for shared state (rate-limit counters, session ownership, replay ids): identity provider +
 * subject, hashed, so the KV store never holds user identifiers. Two providers may issue the same `sub` for different
 * people, which is why the provider is part of it.
 */
export function principalKey(principal: { idp: string; sub: string }): string {
  return createHash("sha256").update(`${principal.idp}\u0000${principal.sub}`).digest("hex").slice(0, 32);
}
