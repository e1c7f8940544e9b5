import { type ScrubbingPolicy, scrubbingPolicySchema } from "../../../src/config/schema.ts";
import type { CompiledScrubbing, CompileScrubbingOptions } from "../../../src/pii/index.ts";
import { compileScrubbing, ENTITY_TYPES } from "../../../src/pii/index.ts";

/** A scrubbing layer as the configuration loader produces it: the schema fills the defaults. */
export function layer(policy: Record<string, unknown>) {
  return scrubbingPolicySchema.parse(policy);
}

export const HASH_KEY = "test-hash-key-0123456789abcdef-0123456789";

/** The compiled layers; a test that expects them to compile fails with the problems when they do not. */
export function compiled(
  policies: Record<string, unknown>[],
  options: CompileScrubbingOptions = { hashKey: HASH_KEY },
): CompiledScrubbing {
  const result = compileScrubbing(policies.map(layer), options);
  if ("problems" in result) throw new Error(`unexpected problems: ${JSON.stringify(result.problems)}`);
  return result;
}

/**
 * A layer with the schema's defaults but without its checks: the engine must find problems on its own too
 * (an organization policy arrives from the control plane, not from the YAML file).
 */
export function uncheckedLayer(policy: Record<string, unknown>): ScrubbingPolicy {
  const recognizers = (policy.recognizers as Record<string, unknown>[] | undefined) ?? [];
  return {
    enabled: false,
    sensitive_fields: [],
    whitelist_fields: [],
    custom_rules: [],
    ...policy,
    recognizers: recognizers.map((setting) => ({ enabled: true, ...setting })),
  } as unknown as ScrubbingPolicy;
}

/** The problems of layers that must not compile. */
export function problemsOf(policies: Record<string, unknown>[], options: CompileScrubbingOptions = {}) {
  const result = compileScrubbing(policies.map(uncheckedLayer), options);
  if (!("problems" in result)) throw new Error("expected compile problems, got a compiled policy");
  return result.problems;
}

/** Scrubbing on with every built-in recognizer, the opt-in ones too. */
export function allRecognizers(extra: Record<string, unknown> = {}): CompiledScrubbing {
  return compiled([
    {
      enabled: true,
      recognizers: ENTITY_TYPES.map((entity_type) => ({ entity_type, enabled: true })),
      ...extra,
    },
  ]);
}

/** What one text's findings were: `[entity, matched text]` pairs in text order. */
export function found(scrubbing: CompiledScrubbing, text: string): [string, string][] {
  return scrubbing
    .scrubText(text)
    .findings.map((finding) => [finding.entity, text.slice(finding.start, finding.end)]);
}
