import { createHash } from "node:crypto";
import { type AuditEvent, type ChainedAuditEvent, GENESIS_HASH } from "./audit-event.ts";

/** JSON with object keys sorted at every level, so the same event always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

export function hashOf(event: Omit<ChainedAuditEvent, "hash">): string {
  return createHash("sha256").update(canonicalJson(event)).digest("hex");
}

/** Links one instance's events: each carries its sequence number, the previous hash and its own. */
export class HashChain {
  readonly instance: string;
  #seq = 0;
  #previous = GENESIS_HASH;

  constructor(instance: string) {
    this.instance = instance;
  }

  link(event: AuditEvent): ChainedAuditEvent {
    const unsigned = { ...event, instance: this.instance, seq: this.#seq, prev_hash: this.#previous };
    const hash = hashOf(unsigned);
    this.#seq += 1;
    this.#previous = hash;
    return { ...unsigned, hash };
  }
}
