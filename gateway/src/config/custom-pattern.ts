import { RE2JS } from "re2js";

// Operator-supplied patterns (`custom_rules[].pattern`) run on every scrubbed string, so they are compiled by
// re2js, a port of RE2: matching takes time linear in the input whatever the pattern, so no pattern can stall
// the event loop. The price is RE2 syntax: no backreferences and no lookaround; `(?i)` makes a pattern (or
// `(?i:...)` a part) case-insensitive. The config schema and the scrubbing engine both compile through here.

export type CustomPatternResult = { ok: true; pattern: RE2JS } | { ok: false; reason: string };

export function compileCustomPattern(source: string): CustomPatternResult {
  if (source === "") return { ok: false, reason: "is empty" };
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source);
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
