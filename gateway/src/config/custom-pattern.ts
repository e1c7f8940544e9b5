import { createRequire } from "node:module";
import type { RE2JS } from "re2js";

// Operator-supplied patterns (`custom_rules[].pattern`) run on every scrubbed string, so they are compiled by
// re2js, a port of RE2: matching takes time linear in the input whatever the pattern, so no pattern can stall
// the event loop. The price is RE2 syntax: no backreferences and no lookaround; `(?i)` makes a pattern (or
// `(?i:...)` a part) case-insensitive. The config schema and the scrubbing engine both compile through here.

let re2: typeof RE2JS | undefined;

/**
 * re2js, required (its CommonJS build, synchronously) on the first pattern a configuration has: most have none, and
 * the engine is ~1 MB resident. Patterns compile at load and reload, so nothing waits for it on a request.
 */
export function re2js(): typeof RE2JS {
  re2 ??= (createRequire(import.meta.url)("re2js") as typeof import("re2js")).RE2JS;
  return re2;
}

export type CustomPatternResult = { ok: true; pattern: RE2JS } | { ok: false; reason: string };

export function compileCustomPattern(source: string): CustomPatternResult {
  if (source === "") return { ok: false, reason: "is empty" };
  let pattern: RE2JS;
  try {
    pattern = re2js().compile(source);
  } catch (error) {
    return { ok: false, reason: `is not a valid RE2 pattern (${describeSyntaxError(source, error)})` };
  }
  // A pattern that matches the empty string (`a*`, `x?`) would "match" between every character: nothing to
  // scrub, endless findings. Refused so the operator learns at load, not from an idle rule.
  if (pattern.matches(""))
    return { ok: false, reason: "matches the empty string, so it would scrub nothing" };
  return { ok: true, pattern };
}

function describeSyntaxError(source: string, error: unknown): string {
  const message =
    error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : String(error);
  if (/\\[1-9]/.test(source) && /invalid escape/.test(message)) {
    return `${message}: backreferences are not supported, matching must stay linear-time`;
  }
  if (/\(\?<?[=!]/.test(source)) return `${message}: lookahead and lookbehind are not supported`;
  return message;
}
