import type { RE2JS } from "re2js";
import { compileCustomPattern, re2js } from "../config/custom-pattern.ts";
import { ENTITY_TYPES, type EntityType, isEntityType, OPT_IN_ENTITY_TYPES } from "../config/pii-entities.ts";
import type { ConfigProblem } from "../config/problems.ts";
import type { ScrubbingPolicy } from "../config/schema.ts";
import { contextWordsFor } from "./context.ts";
import {
  type CompiledCustomRule,
  HASH_KEY_VARIABLE,
  MIN_HASH_KEY_LENGTH,
  replacementFor,
} from "./custom-rules.ts";
import { DEFAULT_SCRUB_LIMITS, type LimitExceeded, type ScrubLimits } from "./limits.ts";
import { mergeScrubbingLayers } from "./merge-layers.ts";
import { RECOGNIZERS } from "./recognizers/index.ts";
import { loadPhoneNumberLibrary, phoneNumberRecognizer } from "./recognizers/phone-number.ts";
import { type PiiFinding, type ScrubEngine, ScrubRun } from "./scrub-run.ts";
import type { ActiveRecognizer } from "./text-scanner.ts";

export interface ScrubResult<T> {
  value: T;
  /** False when `value` is the input itself. */
  changed: boolean;
  /** Replacements by entity type, custom rule name (`custom_rules[i]`) or `SENSITIVE_FIELD`. */
  counts: Record<string, number>;
  /** scrubText only: each replaced span of the input. Empty for scrubValue. */
  findings: PiiFinding[];
  /** Set when a bound stopped the scan: the unscanned parts are `[UNSCANNED]` in `value`. */
  limitExceeded?: LimitExceeded;
}

export interface CompiledScrubbing {
  /** Whether any layer turned scrubbing on; when false, both methods return their input unchanged. */
  readonly enabled: boolean;
  /** The recognizers that run, in a fixed order. */
  readonly entityTypes: readonly EntityType[];
  /** Recognizers and custom rules on one string. */
  scrubText(text: string): ScrubResult<string>;
  /** Any JSON value: sensitive fields masked, whitelisted fields left alone, every other string (and key) scrubbed. */
  scrubValue(value: unknown): ScrubResult<unknown>;
}

export interface ScrubbingProblems {
  problems: ConfigProblem[];
}

export interface CompileScrubbingOptions {
  /** The value of SVC_SCRUB_HASH_KEY; needed when a custom rule uses method `hash`. */
  hashKey?: string;
  /** Where each layer sits in the configuration (`gateway_policy.scrubbing`), used in problem paths. */
  layerPaths?: readonly string[];
  limits?: Partial<ScrubLimits>;
}

/**
 * Merges the scrubbing layers of one server (organization, gateway, server: lowest precedence first) and
 * compiles them once: every custom pattern through re2js, every active recognizer with its replacement.
 * Anything wrong comes back as problems, each naming the rule or recognizer.
 */
export function compileScrubbing(
  layers: readonly ScrubbingPolicy[],
  options: CompileScrubbingOptions = {},
): CompiledScrubbing | ScrubbingProblems {
  const merged = mergeScrubbingLayers(layers, options.layerPaths);
  const problems: ConfigProblem[] = [];
  const hashKey = options.hashKey === "" ? undefined : options.hashKey;

  const rules: CompiledCustomRule[] = [];
  merged.customRules.forEach((rule, index) => {
    const compiled = compileCustomPattern(rule.pattern);
    if (!compiled.ok) {
      problems.push({ path: `${rule.origin}.pattern`, message: compiled.reason });
      return;
    }
    if (rule.method === "replace" && rule.replacement === undefined) {
      problems.push({ path: `${rule.origin}.replacement`, message: "is required when method is replace" });
      return;
    }
    if (rule.method === "hash" && hashKey === undefined) {
      problems.push({
        path: `${rule.origin}.method`,
        message: `hash needs a per-deployment key: set the environment variable ${HASH_KEY_VARIABLE}`,
      });
      return;
    }
    if (rule.method === "hash" && hashKey !== undefined && hashKey.length < MIN_HASH_KEY_LENGTH) {
      problems.push({
        path: `${rule.origin}.method`,
        message: `hash needs ${HASH_KEY_VARIABLE} of at least ${MIN_HASH_KEY_LENGTH} characters (it has ${hashKey.length})`,
      });
      return;
    }
    rules.push({
      name: `custom_rules[${index}]`,
      source: rule.pattern,
      pattern: compiled.pattern,
      replace: replacementFor(rule.method, rule.replacement, hashKey),
    });
  });

  for (const [entity, setting] of merged.recognizers) {
    if (!isEntityType(entity)) {
      problems.push({
        path: `${setting.origin}.entity_type`,
        message: `no built-in recognizer for ${entity}; known: ${ENTITY_TYPES.join(", ")}`,
      });
    }
  }
  if (problems.length > 0) return { problems };

  const active = ENTITY_TYPES.filter(
    (entity) => merged.recognizers.get(entity)?.enabled ?? !OPT_IN_ENTITY_TYPES.has(entity),
  ).map((entity) => RECOGNIZERS[entity]);
  // Its library is loaded now, with the configuration, not on the first request that needs it; and only when
  // scrubbing is on, since a disabled policy's recognizers never run.
  if (merged.enabled && active.includes(phoneNumberRecognizer)) loadPhoneNumberLibrary();
  const recognizers: ActiveRecognizer[] = active.map((recognizer) => ({
    recognizer,
    replace: constant(merged.recognizers.get(recognizer.entity)?.replacement ?? `<${recognizer.entity}>`),
    context: contextWordsFor(recognizer, active),
  }));
  const engine: ScrubEngine = {
    recognizers,
    rules: { rules, anyMatch: anyRuleMatcher(rules) },
    sensitiveFields: merged.sensitiveFields,
    whitelistFields: merged.whitelistFields,
    limits: { ...DEFAULT_SCRUB_LIMITS, ...options.limits },
  };
  return merged.enabled ? enabledScrubbing(engine) : DISABLED;
}

function constant(text: string): () => string {
  return () => text;
}

/**
 * One RE2 program matching wherever any rule matches: most strings match none, and one linear scan with no
 * capture groups says so far cheaper than a matcher per rule.
 */
function anyRuleMatcher(rules: readonly CompiledCustomRule[]): RE2JS | undefined {
  if (rules.length === 0) return undefined;
  return re2js().compile(rules.map((rule) => `(?:${rule.source})`).join("|"));
}

const DISABLED: CompiledScrubbing = {
  enabled: false,
  entityTypes: [],
  scrubText: (text) => ({ value: text, changed: false, counts: {}, findings: [] }),
  scrubValue: (value) => ({ value, changed: false, counts: {}, findings: [] }),
};

function enabledScrubbing(engine: ScrubEngine): CompiledScrubbing {
  const result = <T>(run: ScrubRun, value: T): ScrubResult<T> => {
    const out: ScrubResult<T> = { value, changed: run.changed, counts: run.counts, findings: run.findings };
    if (run.limitExceeded !== undefined) out.limitExceeded = run.limitExceeded;
    return out;
  };
  return {
    enabled: true,
    entityTypes: engine.recognizers.map(({ recognizer }) => recognizer.entity),
    scrubText(text) {
      const run = new ScrubRun(engine, true);
      return result(run, run.scrubString(text, ""));
    },
    scrubValue(value) {
      const run = new ScrubRun(engine, false);
      return result(run, run.scrubValue(value, 0, "", false));
    },
  };
}
