// The PII scrubbing engine: personal data in MCP messages (tool arguments, tool results, resources, prompts)
// found by Presidio-style recognizers and operator rules, and replaced. Self-contained: it knows nothing of
// the request pipeline; the caller decides which messages and fields to pass. Behaviour, defaults, bounds
// and measurements: docs/scrubbing.md.
//
//   const compiled = compileScrubbing([organization, gateway, server], { hashKey: process.env.SVC_SCRUB_HASH_KEY });
//   if ("problems" in compiled) → configuration problems, each with a path and message
//   compiled.enabled            → any layer turned scrubbing on
//   compiled.scrubText(text)    → { value, changed, counts, findings, limitExceeded? }
//   compiled.scrubValue(json)   → the same for any JSON value; `value` is the input object when nothing changed
//
// Compile once per configuration; both methods are synchronous and bounded (limits.ts).

export { compileCustomPattern } from "../config/custom-pattern.ts";
export { ENTITY_TYPES, type EntityType, OPT_IN_ENTITY_TYPES } from "../config/pii-entities.ts";
export {
  type CompiledScrubbing,
  type CompileScrubbingOptions,
  compileScrubbing,
  type ScrubbingProblems,
  type ScrubResult,
} from "./compile.ts";
export { HASH_KEY_VARIABLE, MASK_TEXT, MIN_HASH_KEY_LENGTH } from "./custom-rules.ts";
export { DEFAULT_SCRUB_LIMITS, type LimitExceeded, type ScrubLimits, UNSCANNED_MARKER } from "./limits.ts";
export { type PiiFinding, SENSITIVE_FIELD_COUNT } from "./scrub-run.ts";
export { SCORE_THRESHOLD } from "./text-scanner.ts";
