import { hash } from "node:crypto";
import { type AuditEvent, type ChainedAuditEvent, completeEvent, GENESIS_HASH } from "./audit-event.ts";
import { withJson } from "./event-json.ts";

/** Each key's JSON text: audit events use a small fixed set of keys, so each is quoted once (bounded all the same). */
const quotedKeys = new Map<string, string>();

function quoted(key: string): string {
  let text = quotedKeys.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    if (quotedKeys.size < 1000) quotedKeys.set(key, text);
  }
  return text;
}

/**
 * JSON with object keys sorted at every level, so the same event always hashes the same. Written with plain loops
 * (it runs once per audit event, on every request), with exactly the output of the original
 * `[${items.map(canonicalJson).join(",")}]` / `{"key":${canonicalJson(value)},...}` form, so every hash already
 * written still verifies: an undefined array item is empty text (as join writes it), an undefined field's value the
 * text "undefined" (as a template literal writes it).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      const item: string | undefined = canonicalJson(value[i]);
      text += i === 0 ? (item ?? "") : `,${item ?? ""}`;
    }
    return `${text}]`;
  }
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value).sort();
    let text = "{";
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      text += `${i === 0 ? "" : ","}${quoted(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`;
    }
    return `${text}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fields a linked event hashes (all but `hash`), in canonicalJson's order: every field an event is completed with,
 * and the three `link` adds. Derived, so it cannot drift from the event's shape.
 */
export const LINKED_FIELDS: readonly string[] = [
  ...Object.keys(completeEvent({ kind: "call_completed" }, "")),
  "instance",
  "seq",
  "prev_hash",
].sort();
const linkedFieldSet = new Set(LINKED_FIELDS);

/**
 * An event whose canonical JSON is what JSON.stringify writes for its fields copied in sorted order: only the linked
 * fields, none undefined, no object inside (whose keys would need sorting too), and only strings in arrays (an
 * undefined item is written differently). Every event the gateway links is one; anything else (a file being verified
 * may hold any JSON) takes canonicalJson.
 */
function isPlainLinkedEvent(event: Record<string, unknown>): boolean {
  let fields = 0;
  for (const key in event) {
    fields += 1;
    if (!linkedFieldSet.has(key)) return false;
    const value = event[key];
    if (value === undefined) return false;
    if (typeof value === "object" && value !== null) {
      if (!Array.isArray(value)) return false;
      for (const item of value) if (typeof item !== "string") return false;
    }
  }
  return fields === LINKED_FIELDS.length;
}

/** The event's fields copied in sorted order, when JSON.stringify of that copy is its canonicalJson; else undefined. */
function sortedCopy(event: Omit<ChainedAuditEvent, "hash">): Record<string, unknown> | undefined {
  const fields = event as unknown as Record<string, unknown>;
  if (!isPlainLinkedEvent(fields)) return undefined;
  const sorted: Record<string, unknown> = {};
  for (const key of LINKED_FIELDS) sorted[key] = fields[key];
  return sorted;
}

export function hashOf(event: Omit<ChainedAuditEvent, "hash">): string {
  const sorted = sortedCopy(event);
  // By the native serialiser when the event allows (a third of the CPU).
  return hash("sha256", sorted === undefined ? canonicalJson(event) : JSON.stringify(sorted), "hex");
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
    const sorted = sortedCopy(unsigned);
    if (sorted === undefined) return this.#linked(unsigned, hashOf(unsigned));
    // The text hashed is the event's JSON but for its hash: the line every sink writes is that text with the hash
    // added last, which is what JSON.stringify writes for the sorted copy once the hash is set on it. So the event
    // is serialised once, not once to hash and again to write.
    const text = JSON.stringify(sorted);
    const digest = hash("sha256", text, "hex");
    sorted.hash = digest;
    this.#advance(digest);
    return withJson(
      sorted as unknown as ChainedAuditEvent,
      `${text.slice(0, -1)},"hash":${JSON.stringify(digest)}}`,
    );
  }

  #linked(unsigned: Omit<ChainedAuditEvent, "hash">, digest: string): ChainedAuditEvent {
    this.#advance(digest);
    return { ...unsigned, hash: digest };
  }

  #advance(digest: string): void {
    this.#seq += 1;
    this.#previous = digest;
  }
}
