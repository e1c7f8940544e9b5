import { createHmac } from "node:crypto";
import type { RE2JS } from "re2js";

// Operator rules (`custom_rules[]`): an RE2 pattern and what to do with each match.
//   mask    → "[MASKED]", the same text as a sensitive field: a fixed mask does not reveal the length
//   remove  → nothing
//   hash    → "<hash:" + the first 16 hex digits of HMAC-SHA-256(SVC_SCRUB_HASH_KEY, match) + ">": equal values
//             stay recognisably equal within a deployment, yet cannot be reversed or compared across them
//   replace → `replacement`, literally (no group references)

export const MASK_TEXT = "[MASKED]";
export const HASH_KEY_VARIABLE = "SVC_SCRUB_HASH_KEY";
/** Shortest accepted hash key: 32 characters, so the key is not the weak point of the HMAC. */
export const MIN_HASH_KEY_LENGTH = 32;
const HASH_HEX_DIGITS = 16;

export interface CompiledCustomRules {
  readonly rules: readonly CompiledCustomRule[];
  /** Matches where any rule matches; undefined when there are no rules. */
  readonly anyMatch: RE2JS | undefined;
}

export type CustomRuleMethod = "mask" | "remove" | "hash" | "replace";

export interface CompiledCustomRule {
  /** `custom_rules[<index in the merged list>]`: the name findings and counts use. */
  readonly name: string;
  /** The pattern as written. */
  readonly source: string;
  readonly pattern: RE2JS;
  readonly replace: (match: string) => string;
}

export function replacementFor(
  method: CustomRuleMethod,
  replacement: string | undefined,
  hashKey: string | undefined,
): (match: string) => string {
  switch (method) {
    case "mask":
      return () => MASK_TEXT;
    case "remove":
      return () => "";
    case "replace": {
      const text = replacement ?? "";
      return () => text;
    }
    case "hash": {
      if (hashKey === undefined) throw new Error(`method hash needs ${HASH_KEY_VARIABLE}`);
      return (match) => `<hash:${keyedHash(hashKey, match)}>`;
    }
  }
}

/** The first 16 hex digits of HMAC-SHA-256(key, value). */
export function keyedHash(key: string, value: string): string {
  return createHmac("sha256", key).update(value, "utf8").digest("hex").slice(0, HASH_HEX_DIGITS);
}

/** Every match of `rule` in `text`, skipping empty ones (a pattern such as `\b` matches between characters). */
export function findRuleMatches(
  rule: CompiledCustomRule,
  text: string,
  emit: (start: number, end: number) => void,
) {
  const matcher = rule.pattern.matcher(text);
  while (matcher.find()) {
    const start = matcher.start();
    const end = matcher.end();
    if (end > start) emit(start, end);
  }
}
