import type { z } from "zod";
import { mergeFirewallLayers } from "../firewall/policy.ts";
import { deriveConfig, type GatewayConfig } from "./derive.ts";
import { type ConfigProblem, formatPath, type PathSegment } from "./problems.ts";
import { checkCrossObjectRules } from "./rules.ts";
import { gatewayConfigSchema } from "./schema.ts";
import { nearestKey } from "./suggest.ts";
import { parseYaml, type YamlSource } from "./yaml-source.ts";

export type DeploymentMode = "standalone" | "distributed" | "centralized";

export type ValidationResult =
  | { ok: true; config: GatewayConfig; mode: "standalone" | "distributed" }
  | { ok: false; problems: ConfigProblem[] };

export interface ValidateTextOptions {
  /** The variables `${VAR}` references resolve against; none unless given (the loader passes the process's). */
  env?: Record<string, string | undefined>;
  /** Leave an unset `${VAR}` as literal text instead of failing (the operator validates before the pod has secrets). */
  keepUnsetVariables?: boolean;
}

/** Parses, interpolates and validates YAML text; every problem is reported, each located in the text. */
export function validateConfigText(text: string, options: ValidateTextOptions = {}): ValidationResult {
  if (text.trim() === "")
    return { ok: false, problems: [{ path: "", message: "the configuration is empty" }] };
  const parsed = parseYaml(text, options.env ?? {}, options.keepUnsetVariables ?? false);
  if (parsed.source === undefined) return { ok: false, problems: parsed.problems };
  if (parsed.source.value === null)
    return { ok: false, problems: [{ path: "", message: "the configuration is empty" }] };
  return validateConfigValue(parsed.source.value, parsed.source, parsed.problems, parsed.failedPaths);
}

/** Validates an already-built value (centralized mode builds one from the environment). */
export function validateConfigValue(
  value: unknown,
  source?: Pick<YamlSource, "locate">,
  earlierProblems: ConfigProblem[] = [],
  skipPaths: ReadonlySet<string> = new Set(),
): ValidationResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      problems: [
        ...earlierProblems,
        { path: "", message: "the configuration must be a mapping of keys to values" },
      ],
    };
  }
  const locate = (path: readonly PathSegment[], atKey = false) => source?.locate(path, atKey) ?? {};
  const problems = [...earlierProblems];
  const add = (path: PathSegment[], message: string, atKey = false) => {
    const key = formatPath(path);
    if (!skipPaths.has(key)) problems.push({ path: key, message, ...locate(path, atKey) });
  };

  const result = gatewayConfigSchema.safeParse(value, { reportInput: true });
  if (!result.success) {
    for (const issue of result.error.issues) {
      const path = issue.path as PathSegment[];
      if (issue.code === "unrecognized_keys") {
        const known = knownKeysAt(path);
        for (const key of issue.keys) {
          const suggestion = nearestKey(key, known);
          add(
            [...path, key],
            suggestion === undefined ? "unknown key" : `unknown key (did you mean "${suggestion}"?)`,
            true,
          );
        }
      } else {
        add(path, describeIssue(issue));
      }
    }
  }
  for (const problem of checkCrossObjectRules(value)) add(problem.path, problem.message);

  if (result.success) {
    // A server's firewall may only tighten the gateway's: checked here so `validate` and the operator say so too.
    result.data.servers.forEach((server, index) => {
      const merged = mergeFirewallLayers(result.data.gateway_policy.firewall, server.firewall, [
        "servers",
        index,
        "firewall",
      ]);
      if ("problems" in merged) for (const problem of merged.problems) add(problem.path, problem.message);
    });
  }
  if (!result.success || problems.length > 0) return { ok: false, problems: sortByPosition(problems) };
  const config = deriveConfig(result.data);
  return { ok: true, config, mode: config.control_plane === undefined ? "standalone" : "distributed" };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  const outOfRange = (issue.code === "too_small" || issue.code === "too_big") && typeof input === "number";
  if (outOfRange) return `${issue.message} (got ${input})`;
  const aboutTheValue =
    issue.code === "invalid_type" || issue.code === "invalid_value" || issue.code === "invalid_format";
  if (!aboutTheValue) return issue.message;
  // zod reports a missing key as a wrong type or value whose input is undefined.
  if (input === undefined) return "is required";
  return `${issue.message} (got ${showValue(input)})`;
}

function showValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

/** Keys the schema accepts at a path, for "did you mean" suggestions. */
function knownKeysAt(path: readonly PathSegment[]): string[] {
  let schema: unknown = gatewayConfigSchema;
  for (const segment of path) {
    schema = unwrap(schema);
    const def = (schema as { _zod: { def: Record<string, unknown> } })._zod.def;
    if (def.type === "object") schema = (def.shape as Record<string, unknown>)[segment as string];
    else if (def.type === "array") schema = def.element;
    else if (def.type === "record") schema = def.valueType;
    else return [];
    if (schema === undefined) return [];
  }
  const def = (unwrap(schema) as { _zod: { def: Record<string, unknown> } })._zod.def;
  return def.type === "object" ? Object.keys(def.shape as Record<string, unknown>) : [];
}

function unwrap(schema: unknown): unknown {
  let current = schema as { _zod: { def: { innerType?: unknown } } };
  while (current._zod.def.innerType !== undefined) current = current._zod.def.innerType as typeof current;
  return current;
}

function sortByPosition(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((problem, order) => ({ problem, order }))
    .sort((a, b) => (a.problem.line ?? Infinity) - (b.problem.line ?? Infinity) || a.order - b.order)
    .map(({ problem }) => problem);
}
