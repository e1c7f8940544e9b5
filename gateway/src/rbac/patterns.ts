import type { CapabilityOverride } from "../config/index.ts";
import { type Capability, capabilityKey } from "./capability.ts";

/**
 * The override that governs a capability. Precedence, most specific first:
 * 1. exact: `tools/delete_repo`, `resources/file:///etc/motd`;
 * 2. patterns within a kind: a resource template (`resources/file:///logs/{date}`, each `{var}` one path segment)
 *    or a trailing `*` (`resources/file:///logs/*`), the longest pattern first;
 * 3. the kind wildcard: `tools/*`, `resources/*`, `prompts/*`.
 * Among equals, the first in the file wins.
 */
export function matchingOverride(
  overrides: readonly CapabilityOverride[],
  capability: Capability,
): CapabilityOverride | undefined {
  const key = capabilityKey(capability);
  const exact = overrides.find((o) => o.capability === key);
  if (exact !== undefined) return exact;
  const kindWildcard = `${capability.kind}/*`;
  const patterned = overrides
    .filter(
      (o) =>
        o.capability !== kindWildcard &&
        o.capability.startsWith(`${capability.kind}/`) &&
        isPattern(o.capability),
    )
    .filter((o) => patternToRegExp(o.capability).test(key))
    .sort((a, b) => b.capability.length - a.capability.length);
  return patterned[0] ?? overrides.find((o) => o.capability === kindWildcard);
}

function isPattern(capability: string): boolean {
  return capability.endsWith("*") || /\{[^}]+\}/.test(capability);
}

const compiled = new Map<string, RegExp>();

function patternToRegExp(pattern: string): RegExp {
  let regex = compiled.get(pattern);
  if (regex === undefined) {
    const body = pattern
      .split(/(\{[^}]+\})/)
      .map((part) =>
        /^\{[^}]+\}$/.test(part) ? "[^/]+" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*$/, ".*"),
      )
      .join("");
    regex = new RegExp(`^${body}$`);
    compiled.set(pattern, regex);
  }
  return regex;
}
