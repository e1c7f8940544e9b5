// The labelled injection data and THE dev split, shared by train-firewall.ts and eval-firewall.ts so
// both measure on exactly the same rows.
//
// Split rule (deterministic, seeded):
// - Random dev split: inside each `subset`, rows are shuffled with a seeded PRNG and round(25%) of
//   them are held out as dev (a subset of 1 row stays in train). Every subset therefore appears in
//   both halves in its natural proportion.
// - Held-out sources: a second model is trained WITHOUT the rows of HELD_OUT_SUBSETS (neither train nor
//   dev) and measured on all of their rows. They stand in for the maintainers' unseen sources: two
//   jailbreak collections (giskard, self-reminder), one benign prompt collection (wildguard-benign),
//   one whole AgentDojo suite (travel) and one whole BIPIA family (code).

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FirewallDirection } from "../src/firewall/detector.ts";

export interface LabelledText {
  readonly text: string;
  readonly label: 0 | 1;
  readonly source: string;
  readonly subset: string;
  /** `request` for direct prompts, `response` for tool outputs. */
  readonly direction: FirewallDirection;
}

export interface DatasetSplit {
  readonly train: readonly LabelledText[];
  readonly dev: readonly LabelledText[];
}

export const SPLIT_SEED = 20261125;
export const DEV_FRACTION = 0.25;

/** Whole subsets kept away from the generalisation model (see the header). */
export function isHeldOutSubset(subset: string): boolean {
  return (
    subset === "giskard" ||
    subset === "self-reminder-jailbreak" ||
    subset === "wildguard-benign" ||
    subset.startsWith("agentdojo-travel-") ||
    subset.startsWith("bipia-code-")
  );
}

const FILES: Readonly<Record<FirewallDirection, string>> = {
  request: "direct_train.jsonl",
  response: "indirect_train.jsonl",
};

/** SVC_INJECTION_DATA, else `../shared/data/injection` next to the repository root. */
export function injectionDataDirectory(): string {
  const override = process.env.SVC_INJECTION_DATA;
  if (override !== undefined && override !== "") return resolve(override);
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
  return resolve(repoRoot, "..", "shared", "data", "injection");
}

/** Every labelled row of both files; throws naming the missing path or the bad line. */
export function loadInjectionData(directory = injectionDataDirectory()): LabelledText[] {
  const rows: LabelledText[] = [];
  for (const direction of ["request", "response"] as const) {
    const file = join(directory, FILES[direction]);
    if (!existsSync(file)) {
      throw new Error(
        `Injection data file ${file} is missing: set SVC_INJECTION_DATA to the folder holding ${FILES.request} and ${FILES.response}`,
      );
    }
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, index) => {
      if (line.trim() === "") return;
      const row = JSON.parse(line) as Partial<Record<string, unknown>>;
      const { text, label, source, subset } = row;
      if (typeof text !== "string" || (label !== 0 && label !== 1) || typeof subset !== "string") {
        throw new Error(`${file}:${index + 1}: expected text (string), label (0 or 1) and subset (string)`);
      }
      rows.push({ text, label, source: typeof source === "string" ? source : subset, subset, direction });
    });
  }
  return rows;
}

/** The subsets of the committed clean corpora (build-clean-outputs.ts). */
export const COMMITTED_CLEAN_SUBSETS: readonly string[] = ["ownrepo-clean", "synthetic-clean"];

const CLEAN_OUTPUTS_FILE = new URL("./firewall-data/clean-outputs.jsonl", import.meta.url);

/**
 * The committed clean tool outputs (firewall-data/clean-outputs.jsonl, built once by
 * build-clean-outputs.ts): excerpts of this repository's files and synthetic structured outputs, all
 * negatives for the response head.
 */
export function loadCleanOutputs(): LabelledText[] {
  return readFileSync(CLEAN_OUTPUTS_FILE, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, index) => {
      const { text, subset, source } = JSON.parse(line) as Partial<Record<string, unknown>>;
      if (typeof text !== "string" || typeof subset !== "string" || typeof source !== "string") {
        throw new Error(
          `${CLEAN_OUTPUTS_FILE.pathname}:${index + 1}: expected text, subset and source (strings)`,
        );
      }
      return { text, label: 0, source, subset, direction: "response" } as const;
    });
}

/** Everything the classifier learns from: the injection data plus the committed clean tool outputs. */
export function loadTrainingData(directory = injectionDataDirectory()): LabelledText[] {
  return [...loadInjectionData(directory), ...loadCleanOutputs()];
}

/** mulberry32: a small seeded PRNG so the split and the training order are the same on every run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function stringSeed(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

export function shuffleInPlace<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = items[i] as T;
    items[i] = items[j] as T;
    items[j] = swap;
  }
  return items;
}

/** The stratified random split: round(DEV_FRACTION) of each subset held out as dev. */
export function splitBySubset(rows: readonly LabelledText[]): DatasetSplit {
  const bySubset = new Map<string, LabelledText[]>();
  for (const row of rows) {
    const key = `${row.direction}/${row.subset}`;
    const group = bySubset.get(key) ?? [];
    group.push(row);
    bySubset.set(key, group);
  }
  const train: LabelledText[] = [];
  const dev: LabelledText[] = [];
  for (const key of [...bySubset.keys()].sort()) {
    const group = shuffleInPlace([...(bySubset.get(key) ?? [])], seededRandom(SPLIT_SEED ^ stringSeed(key)));
    const devCount = Math.round(group.length * DEV_FRACTION);
    dev.push(...group.slice(0, devCount));
    train.push(...group.slice(devCount));
  }
  return { train, dev };
}
