import { textProblem } from "../mcp/canonical-form.ts";
import type { Capability } from "./capability.ts";
import type { ToolHints } from "./decide.ts";

/** Answers whether the caller may use one capability; the pipeline binds `decide` to the server and principal. */
export type CapabilityCheck = (capability: Capability, hints?: ToolHints) => boolean;

/** Which array of which list result holds the items, and how an item names its capability. */
const LISTS = {
  "tools/list": { field: "tools", kind: "tools", key: "name" },
  "prompts/list": { field: "prompts", kind: "prompts", key: "name" },
  "resources/list": { field: "resources", kind: "resources", key: "uri" },
  "resources/templates/list": { field: "resourceTemplates", kind: "resources", key: "uriTemplate" },
} as const;

export function isFilteredList(method: string): method is keyof typeof LISTS {
  return Object.hasOwn(LISTS, method);
}

/**
 * A list result without the items the caller may not use, so a user never sees what they cannot call.
 * Returns the same object when nothing was removed (the caller can then pass the original bytes through).
 * An item without a usable name is removed: what cannot be checked is not shown, and a name a call would be refused
 * for (control characters and the like, mcp/canonical-form.ts) cannot be called, so it is not shown either.
 */
export function filterListResult(
  method: keyof typeof LISTS,
  result: unknown,
  allowed: CapabilityCheck,
): unknown {
  const { field, kind, key } = LISTS[method];
  if (typeof result !== "object" || result === null) return result;
  const items = (result as Record<string, unknown>)[field];
  if (!Array.isArray(items)) return result;
  const kept = items.filter((item) => {
    const name =
      typeof item === "object" && item !== null ? (item as Record<string, unknown>)[key] : undefined;
    if (typeof name !== "string" || textProblem(key, name, kind) !== undefined) return false;
    const hints = kind === "tools" ? ((item as { annotations?: ToolHints }).annotations ?? {}) : undefined;
    return allowed({ kind, name }, hints);
  });
  return kept.length === items.length ? result : { ...result, [field]: kept };
}
