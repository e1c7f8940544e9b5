// Builds gateway/scripts/firewall-data/clean-outputs.jsonl: clean tool outputs of kinds the injection
// data lacks, as extra negatives for the classifier's response head. Run once:
// `node gateway/scripts/build-clean-outputs.ts`; the output file is committed, so training does not change
// when the repository does.
//
// Two seeded corpora (subset names contain "clean", so they count as clean tool outputs in the reports):
// - `ownrepo-clean`: excerpts of this repository's own TypeScript, Markdown, YAML and JSON files under
//   gateway/, framework/ and operator/ (what a file-reading or code-search tool returns);
// - `synthetic-clean`: structured outputs from a small generator (synthetic-outputs.ts): JSON records,
//   CSV and Markdown tables, log lines, HTML fragments, SQL results, stack traces, e-mails, API errors,
//   and help pages and personal e-mails that use injection words for their ordinary purpose.
// None may hold an injection: files about the firewall or injections (which quote attacks) are skipped,
// and any excerpt on which a wrapper rule fires is dropped.

import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { normalizeText } from "../src/firewall/normalize.ts";
import { matchWrapperRules } from "../src/firewall/rules.ts";
import { seededRandom, shuffleInPlace } from "./firewall-dataset.ts";
import { syntheticOutputs } from "./synthetic-outputs.ts";

const SEED = 20261126;
const REPO_EXCERPTS = 500;
const SYNTHETIC_OUTPUTS = 600;
const MIN_EXCERPT_CHARS = 200;
const MAX_EXCERPT_CHARS = 2000;
const FOLDERS = ["gateway", "framework", "operator"];
const EXTENSIONS = /\.(?:ts|md|ya?ml|json)$/;
/** Files that quote attacks (the firewall, its tests and docs), generated data and lock files. */
const SKIPPED_PATHS = /firewall|inject|prompt|lock|\/model\/|schema\.json$|clean-outputs/i;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OUTPUT = resolve(repoRoot, "gateway/scripts/firewall-data/clean-outputs.jsonl");

interface CleanRow {
  readonly text: string;
  readonly label: 0;
  readonly subset: string;
  readonly source: string;
}

function isClean(text: string): boolean {
  return matchWrapperRules(normalizeText(text)).length === 0;
}

function repoExcerpts(random: () => number): CleanRow[] {
  const files = execFileSync("git", ["ls-files", ...FOLDERS], { cwd: repoRoot, encoding: "utf8" })
    .split("\n")
    .filter((path) => EXTENSIONS.test(path) && !SKIPPED_PATHS.test(path))
    .sort();
  // Grouped by kind (extension) and a kind picked first, so the few Markdown and YAML files are not
  // drowned by the many TypeScript ones.
  const byKind = new Map<string, { path: string; text: string }[]>();
  for (const path of files) {
    const text = readFileSync(resolve(repoRoot, path), "utf8");
    if (text.length < MIN_EXCERPT_CHARS) continue;
    const kind = path.endsWith(".yml") ? "yaml" : path.slice(path.lastIndexOf(".") + 1);
    byKind.set(kind, [...(byKind.get(kind) ?? []), { path, text }]);
  }
  const kinds = [...byKind.keys()].sort();
  const rows: CleanRow[] = [];
  for (let attempt = 0; rows.length < REPO_EXCERPTS && attempt < REPO_EXCERPTS * 4; attempt++) {
    const contents = byKind.get(kinds[Math.floor(random() * kinds.length)] as string) ?? [];
    const file = contents[Math.floor(random() * contents.length)];
    if (file === undefined) break;
    const length = Math.min(
      file.text.length,
      MIN_EXCERPT_CHARS + Math.floor(random() * (MAX_EXCERPT_CHARS - MIN_EXCERPT_CHARS)),
    );
    // Start at a line boundary, as a tool returning a file or a search hit would.
    const roughStart = Math.floor(random() * (file.text.length - length + 1));
    const lineStart = roughStart === 0 ? 0 : file.text.indexOf("\n", roughStart) + 1;
    const text = file.text.slice(lineStart, lineStart + length);
    if (text.trim().length < MIN_EXCERPT_CHARS / 2 || !isClean(text)) continue;
    rows.push({ text, label: 0, subset: "ownrepo-clean", source: file.path });
  }
  return rows;
}

function main(): void {
  const random = seededRandom(SEED);
  const rows = [
    ...repoExcerpts(random),
    ...syntheticOutputs(SYNTHETIC_OUTPUTS, random)
      .filter(({ text }) => isClean(text))
      .map(({ text, kind }): CleanRow => ({ text, label: 0, subset: "synthetic-clean", source: kind })),
  ];
  shuffleInPlace(rows, random);
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, `${rows.map((row) => JSON.stringify(row)).join("\n")}\n`);
  console.log(`Wrote ${rows.length} clean outputs to ${OUTPUT}`);
}

main();
