import type { CapabilityOverride } from "../config/index.ts";
import { type CapabilityKind, READINGS } from "../mcp/canonical-form.ts";
import type { Capability } from "./capability.ts";

/**
 * The overrides that govern a capability, one per reading (mcp/canonical-form.ts): each reading of the capability is
 * matched against the same reading of every pattern. Precedence within a reading, most specific first:
 * 1. exact: `tools/delete_repo`, `resources/file:///etc/motd`;
 * 2. patterns within a kind: a resource template (`resources/file:///logs/{date}`, each `{var}` one path segment)
 *    or a trailing `*` (`resources/file:///logs/*`), the longest pattern first;
 * 3. the kind wildcard: `tools/*`, `resources/*`, `prompts/*`.
 * Among equals, the first in the file wins. `override` is undefined for a reading no override matches.
 */
export function governingOverrides(
  overrides: readonly CapabilityOverride[],
  capability: Capability,
): Array<{ override: CapabilityOverride | undefined; reading: string }> {
  const { readings, wildcard } = compiled(overrides)[capability.kind];
  const out: Array<{ override: CapabilityOverride | undefined; reading: string }> = [];
  READINGS[capability.kind].forEach((reading, i) => {
    const text = reading.read(capability.name);
    if (text === undefined) return; // this reading cannot parse it, so no upstream reading it so can resolve it
    const table = readings[i] as ReadingTable;
    const override =
      table.exact.get(text) ?? table.patterned.find((p) => p.regex.test(text))?.override ?? wildcard;
    if (!out.some((o) => o.override === override)) out.push({ override, reading: reading.label });
  });
  return out;
}

interface ReadingTable {
  exact: Map<string, CapabilityOverride>;
  /** Longest pattern first (stable: among equals, the first in the file). */
  patterned: Array<{ override: CapabilityOverride; regex: RegExp }>;
}

type CompiledOverrides = Record<CapabilityKind, { readings: ReadingTable[]; wildcard?: CapabilityOverride }>;

/** Compiled once per configuration: a configuration's overrides array lives as long as the configuration. */
const cache = new WeakMap<readonly CapabilityOverride[], CompiledOverrides>();

function compiled(overrides: readonly CapabilityOverride[]): CompiledOverrides {
  let result = cache.get(overrides);
  if (result === undefined) {
    result = compile(overrides);
    cache.set(overrides, result);
  }
  return result;
}

const KINDS: readonly CapabilityKind[] = ["tools", "resources", "prompts"];
const VARIABLE = /\{[^}]+\}/g;

function compile(overrides: readonly CapabilityOverride[]): CompiledOverrides {
  const out = {} as CompiledOverrides;
  for (const kind of KINDS) {
    const readings = READINGS[kind].map((): ReadingTable => ({ exact: new Map(), patterned: [] }));
    let wildcard: CapabilityOverride | undefined;
    const ofKind = overrides.filter((o) => o.capability.startsWith(`${kind}/`));
    // Stable sort: the longest pattern first, the file's order among equals.
    const byLength = [...ofKind].sort((a, b) => b.capability.length - a.capability.length);
    for (const override of ofKind) {
      const pattern = override.capability.slice(kind.length + 1);
      if (pattern === "*") {
        wildcard ??= override;
        continue;
      }
      READINGS[kind].forEach((reading, i) => {
        const text = reading.read(pattern);
        const table = readings[i] as ReadingTable;
        if (text !== undefined && !table.exact.has(text)) table.exact.set(text, override);
      });
    }
    for (const override of byLength) {
      const pattern = override.capability.slice(kind.length + 1);
      if (pattern === "*" || !isPattern(pattern)) continue;
      READINGS[kind].forEach((reading, i) => {
        const regex = patternRegExp(pattern, reading.read);
        if (regex !== undefined) (readings[i] as ReadingTable).patterned.push({ override, regex });
      });
    }
    out[kind] = wildcard === undefined ? { readings } : { readings, wildcard };
  }
  return out;
}

function isPattern(pattern: string): boolean {
  return pattern.endsWith("*") || /\{[^}]+\}/.test(pattern);
}

/**
 * The pattern as a regular expression over one reading: the template variables and the trailing `*` are replaced by
 * placeholders made of lower-case letters and digits (which every reading keeps as they are), the text is read, and
 * the placeholders become `[^/]+` (one path segment) and `.*`. Undefined when the reading cannot parse the pattern.
 */
function patternRegExp(pattern: string, read: (text: string) => string | undefined): RegExp | undefined {
  const star = pattern.endsWith("*");
  const body = star ? pattern.slice(0, -1) : pattern;
  for (let marker = "zq"; marker.length < 12; marker += "q") {
    let count = 0;
    const withPlaceholders =
      body.replace(VARIABLE, () => `${marker}${count++}${marker}`) +
      (star ? `${marker}${count++}${marker}` : "");
    const text = read(withPlaceholders);
    if (text === undefined) return undefined;
    const pieces = text.split(new RegExp(`${marker}(\\d+)${marker}`));
    // split with one capture group: literal, index, literal, index, …, literal.
    const indices = pieces.filter((_, i) => i % 2 === 1).map(Number);
    if (indices.length !== count || indices.some((n, i) => n !== i)) continue; // the marker occurs in the text
    const source = pieces
      .map((piece, i) =>
        i % 2 === 0 ? escapeRegExp(piece) : star && Number(piece) === count - 1 ? ".*" : "[^/]+",
      )
      .join("");
    return new RegExp(`^${source}$`, "s");
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
