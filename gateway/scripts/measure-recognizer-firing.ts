// How often each built-in recognizer fires on a corpus of ordinary text: the measurement behind the default
// recognizer set (docs/scrubbing.md). Reads JSON Lines with a `text` field; with --label N, only rows whose
// `label` is N (e.g. the clean tool outputs of a labelled injection corpus). Not a test.
//
//   node gateway/scripts/measure-recognizer-firing.ts FILE.jsonl [--label 0]

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { compileScrubbing, ENTITY_TYPES } from "../src/pii/index.ts";

const { values: args, positionals } = parseArgs({
  options: { label: { type: "string" } },
  allowPositionals: true,
});
const file = positionals[0];
if (file === undefined) throw new Error("usage: measure-recognizer-firing.ts FILE.jsonl [--label N]");

const compiled = compileScrubbing(
  [
    {
      enabled: true,
      sensitive_fields: [],
      whitelist_fields: [],
      custom_rules: [],
      recognizers: ENTITY_TYPES.map((entity_type) => ({
        entity_type,
        enabled: true,
        replacement: undefined,
      })),
    },
  ],
  {},
);
if ("problems" in compiled) throw new Error(JSON.stringify(compiled.problems));

const rows = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line) as { text: string; label?: unknown })
  .filter((row) => args.label === undefined || String(row.label) === args.label);
const textsWith = new Map<string, number>();
const examples = new Map<string, string[]>();
for (const row of rows) {
  const { findings } = compiled.scrubText(row.text);
  for (const entity of new Set(findings.map((finding) => finding.entity))) {
    textsWith.set(entity, (textsWith.get(entity) ?? 0) + 1);
  }
  for (const finding of findings) {
    const seen = examples.get(finding.entity) ?? [];
    if (seen.length < 4) seen.push(row.text.slice(finding.start, finding.end));
    examples.set(finding.entity, seen);
  }
}
console.log(`${rows.length} texts`);
for (const [entity, count] of [...textsWith].sort((a, b) => b[1] - a[1])) {
  const share = ((count / rows.length) * 100).toFixed(1);
  console.log(
    `${entity.padEnd(18)} in ${String(count).padStart(5)} texts (${share}%)  e.g. ${JSON.stringify(examples.get(entity))}`,
  );
}
