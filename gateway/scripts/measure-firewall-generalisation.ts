// Measures how the response head generalises to tool outputs of unseen sources, for the training
// variants that were tried (see gateway/docs/firewall-model.md). Run:
// `node gateway/scripts/measure-firewall-generalisation.ts [variant ...]` (all variants when none named).
//
// Leave-one-family-out: for each family (bipia-code, bipia-table, bipia-email, injecagent, agentdojo) a
// response head is trained and calibrated without any of its rows, then measured on all of them: false
// positives on its clean outputs and recall on its attacks. The committed clean corpora are measured the
// same way: a variant that does not train on a corpus is measured on all its rows, one that does on its
// dev rows only. "gated" counts a flag only when the text also holds an instruction cue or a wrapper rule.

import type { FirewallDirection } from "../src/firewall/detector.ts";
import { extractFeatures } from "../src/firewall/features.ts";
import { normalizeText } from "../src/firewall/normalize.ts";
import { matchWrapperRules } from "../src/firewall/rules.ts";
import {
  COMMITTED_CLEAN_SUBSETS,
  type LabelledText,
  loadTrainingData,
  SPLIT_SEED,
  splitBySubset,
} from "./firewall-dataset.ts";
import { isCleanToolOutput } from "./firewall-metrics.ts";
import { scoreAll, type TrainingOptions, trainModel } from "./firewall-training.ts";

const FAMILIES: readonly string[] = ["bipia-code", "bipia-table", "bipia-email", "injecagent", "agentdojo"];
const NEW_CORPORA = COMMITTED_CLEAN_SUBSETS;

function familyOf(subset: string): string | undefined {
  return FAMILIES.find((family) => subset.startsWith(`${family}-`));
}

interface Variant {
  readonly name: string;
  /** Which of the new clean corpora the variant trains on. */
  readonly corpora: readonly string[];
  /** Share of each used corpus's training rows kept (1 when absent). */
  readonly corpusShare?: number;
  readonly options: TrainingOptions;
}

const RESPONSE_ONLY: readonly FirewallDirection[] = ["response"];

const VARIANTS: readonly Variant[] = [
  { name: "baseline", corpora: [], options: { directions: RESPONSE_ONLY } },
  { name: "+ownrepo", corpora: ["ownrepo-clean"], options: { directions: RESPONSE_ONLY } },
  { name: "+synthetic", corpora: ["synthetic-clean"], options: { directions: RESPONSE_ONLY } },
  { name: "+both", corpora: NEW_CORPORA, options: { directions: RESPONSE_ONLY } },
  {
    name: "+both+planted",
    corpora: NEW_CORPORA,
    options: { directions: RESPONSE_ONLY, plantedInjections: 250 },
  },
  {
    name: "+both+planted-500",
    corpora: NEW_CORPORA,
    options: { directions: RESPONSE_ONLY, plantedInjections: 500 },
  },
  { name: "+both-quarter", corpora: NEW_CORPORA, corpusShare: 0.25, options: { directions: RESPONSE_ONLY } },
  {
    name: "+benign-prompts",
    corpora: [],
    options: { directions: RESPONSE_ONLY, benignPromptsAsResponses: true },
  },
  {
    name: "+both+benign-prompts",
    corpora: NEW_CORPORA,
    options: { directions: RESPONSE_ONLY, benignPromptsAsResponses: true },
  },
];

interface Tally {
  clean: number;
  cleanFlagged: number;
  cleanFlaggedGated: number;
  attacks: number;
  caught: number;
  caughtGated: number;
  /** Recall at the best threshold that keeps these rows' own clean false positives within 3%. */
  recallAt3: number;
}

function hasInstructionCue(text: string): boolean {
  const normalized = normalizeText(text);
  return extractFeatures(normalized, 17).cueCount > 0 || matchWrapperRules(normalized).length > 0;
}

function emptyTally(): Tally {
  return {
    clean: 0,
    cleanFlagged: 0,
    cleanFlaggedGated: 0,
    attacks: 0,
    caught: 0,
    caughtGated: 0,
    recallAt3: 0,
  };
}

function tally(model: ReturnType<typeof trainModel>, rows: readonly LabelledText[]): Tally {
  const result: Tally = { ...emptyTally() };
  const scored = scoreAll(model, rows);
  const cleanScores = scored
    .filter(({ row }) => row.label === 0)
    .map(({ score }) => score)
    .sort((a, b) => b - a);
  // The smallest threshold above the clean scores that must stay below it (3% may be flagged).
  const allowed = Math.floor(cleanScores.length * 0.03);
  const bar = cleanScores[allowed] ?? -1;
  result.recallAt3 = scored.filter(({ row, score }) => row.label === 1 && score > bar).length;
  for (const { row, score } of scored) {
    const flagged = score >= 0.5;
    const gated = flagged && hasInstructionCue(row.text);
    if (row.label === 1) {
      result.attacks++;
      if (flagged) result.caught++;
      if (gated) result.caughtGated++;
    } else {
      result.clean++;
      if (flagged) result.cleanFlagged++;
      if (gated) result.cleanFlaggedGated++;
    }
  }
  return result;
}

function rate(numerator: number, denominator: number): string {
  return denominator === 0 ? "-" : (numerator / denominator).toFixed(3);
}

function line(name: string, t: Tally): string {
  return [
    name.padEnd(28),
    `clean ${String(t.clean).padStart(4)} FP ${rate(t.cleanFlagged, t.clean)} (gated ${rate(t.cleanFlaggedGated, t.clean)})`,
    `attacks ${String(t.attacks).padStart(4)} recall ${rate(t.caught, t.attacks)} (gated ${rate(t.caughtGated, t.attacks)}, at own 3% FP ${rate(t.recallAt3, t.attacks)})`,
  ].join("  ");
}

function main(): void {
  const wanted = process.argv.slice(2);
  const all = loadTrainingData().filter((row) => row.direction === "response" || row.label === 0);
  const { train, dev } = splitBySubset(all);
  for (const variant of VARIANTS.filter(({ name }) => wanted.length === 0 || wanted.includes(name))) {
    const uses = (row: LabelledText) =>
      !NEW_CORPORA.includes(row.subset) || variant.corpora.includes(row.subset);
    const share = variant.corpusShare ?? 1;
    const kept = new Set(
      NEW_CORPORA.flatMap((corpus) => {
        const rows = train.filter((row) => row.subset === corpus);
        return rows.slice(0, Math.round(rows.length * share));
      }),
    );
    const trains = (row: LabelledText) => uses(row) && (!NEW_CORPORA.includes(row.subset) || kept.has(row));
    console.log(`== ${variant.name}`);
    const sum = emptyTally();
    for (const family of FAMILIES) {
      const outside = (row: LabelledText) => familyOf(row.subset) !== family;
      const model = trainModel(
        train.filter((row) => trains(row) && outside(row)),
        dev.filter((row) => uses(row) && outside(row)),
        SPLIT_SEED,
        variant.options,
      );
      const t = tally(
        model,
        all.filter((row) => familyOf(row.subset) === family),
      );
      for (const key of Object.keys(sum) as (keyof Tally)[]) sum[key] += t[key];
      console.log(line(`held out ${family}`, t));
    }
    console.log(line("held out, all families", sum));
    const model = trainModel(train.filter(trains), dev.filter(uses), SPLIT_SEED, variant.options);
    const devResponses = dev.filter(
      (row) => row.direction === "response" && !NEW_CORPORA.includes(row.subset),
    );
    console.log(line("dev (original subsets)", tally(model, devResponses)));
    const originalClean = devResponses.filter((row) => isCleanToolOutput(row.subset));
    console.log(line("dev clean outputs", tally(model, originalClean)));
    for (const corpus of NEW_CORPORA) {
      const trained = variant.corpora.includes(corpus);
      const rows = (trained ? dev : all).filter((row) => row.subset === corpus);
      console.log(line(`${corpus} (${trained ? "dev" : "all, unseen"})`, tally(model, rows)));
    }
  }
}

main();
