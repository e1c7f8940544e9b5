import { createHash, timingSafeEqual } from "node:crypto";

// Gateways present their API key; the operator holds only its SHA-256 (from a Secret key, as 64 hex digits) and
// compares digests in constant time, so neither the key nor how much of it matched can leak.

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** The stored digest as bytes; undefined when it is not 64 hex digits (such a reference admits nobody). */
export function parseKeyDigest(text: string): Buffer | undefined {
  const trimmed = text.trim().toLowerCase();
  return SHA256_HEX.test(trimmed) ? Buffer.from(trimmed, "hex") : undefined;
}

export function keyMatches(presented: string, digest: Buffer): boolean {
  const presentedDigest = createHash("sha256").update(presented, "utf8").digest();
  return presentedDigest.length === digest.length && timingSafeEqual(presentedDigest, digest);
}

/** `Authorization: Bearer <key>` → the key; undefined when absent or malformed. */
export function bearerKey(header: string | undefined): string | undefined {
  const match = /^Bearer ([\x21-\x7e]{1,512})$/.exec(header ?? "");
  return match?.[1];
}
