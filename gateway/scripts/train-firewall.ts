// Trains the built-in prompt-injection classifier and writes src/firewall/model/injection-classifier.json.
// Run: `npm run train:firewall` (data folder: SVC_INJECTION_DATA, default ../shared/data/injection next to
// the repository root). Deterministic: a seeded PRNG orders the examples, so every run writes the same bytes.
//
// Model: one logistic-regression head per direction (request = direct prompts, response = tool outputs)
// over the hashed features of src/firewall/features.ts, scored on windows of consecutive 128-character
// blocks (max over windows, src/firewall/window-classifier.ts; window lengths in WINDOW_BLOCKS).
// Training is multiple-instance: the first epoch learns from every window of every text, later epochs
// from each text's highest-scoring window, which is what inference looks at (a benign text must have no
// suspicious window; an injected one needs one).
//
// Dev split (scripts/firewall-dataset.ts): 25% of each subset held out at random. The shipped model is
// trained on the other 75% only, so the dev figures (printed here and by `npm run eval:firewall`) come
// from rows the weights never saw; the operating point is chosen on dev (see chooseThreshold), which
// makes the dev figures slightly optimistic. A second model trained without the held-out subsets
// (giskard, self-reminder-jailbreak, wildguard-benign, agentdojo-travel-*, bipia-code-*) gives the
// generalisation figures, stored in the model file for the eval report.

import { writeFileSync } from "node:fs";
import { createBuiltinDetector, rawLogit } from "../src/firewall/builtin-detector.ts";
import type { FirewallDirection } from "../src/firewall/detector.ts";
import { extractFeatures } from "../src/firewall/features.ts";
import {
  type BuiltinModel,
  type CalibratedHead,
  quantizeWeights,
  serializeModel,
} from "../src/firewall/model-file.ts";
import { normalizeText } from "../src/firewall/normalize.ts";
import { windowLogit } from "../src/firewall/window-classifier.ts";
import {
  isHeldOutSubset,
  type LabelledText,
  loadInjectionData,
  SPLIT_SEED,
  seededRandom,
  shuffleInPlace,
  splitBySubset,
} from "./firewall-dataset.ts";
import {
  type Counts,
  countOne,
  countsBySubset,
  emptyCounts,
  f1,
  formatCountsTable,
  isCleanToolOutput,
  type ScoredText,
} from "./firewall-metrics.ts";
import { REPORT_AGGREGATES } from "./firewall-report.ts";

const HASH_BITS = 17;
/**
 * Window length in blocks of BLOCK_CHARS (128) characters. Tool outputs use 256-character windows: a
 * planted sentence is short and a 512-character window dilutes it with its benign surroundings (dev
 * recall at 2.5% clean false positives 0.71 -> 0.88). Prompts keep 512: jailbreaks are long and the
 * shorter window raised false positives on unseen benign prompts (held-out 2.0% -> 3.7%).
 */
const WINDOW_BLOCKS: Readonly<Record<FirewallDirection, number>> = { request: 4, response: 2 };
const EPOCHS = 20;
const LEARNING_RATE = 0.5;
const L2 = 1e-5;
/** Logit added per wrapper rule: a named phrase moves a borderline text over the line, not a clear benign one. */
const RULE_BOOST = 3;
/** Operating-point limits on dev: false-positive rate on notinject (requests) / clean tool outputs (responses). */
const MAX_REQUEST_TRAP_FPR = 0.01;
const MAX_RESPONSE_CLEAN_FPR = 0.03;

const MODEL_PATH = new URL("../src/firewall/model/injection-classifier.json", import.meta.url);

interface Example {
  readonly buckets: Int32Array;
  readonly blocks: Int32Array;
  readonly blockCount: number;
  readonly label: 0 | 1;
}

function toExample(row: LabelledText): Example {
  const events = extractFeatures(normalizeText(row.text), HASH_BITS);
  return {
    buckets: events.buckets.slice(0, events.count),
    blocks: events.blocks.slice(0, events.count),
    blockCount: events.blockCount,
    label: row.label,
  };
}

function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

interface LinearHead {
  weights: Float32Array;
  bias: number;
}

/** Multiple-instance logistic regression (see the header); class-balanced, seeded order. */
function trainHead(examples: readonly Example[], windowBlocks: number, seed: number): LinearHead {
  const weights = new Float32Array(1 << HASH_BITS);
  let bias = 0;
  const positives = examples.filter((example) => example.label === 1).length;
  const classWeight = [
    examples.length / (2 * (examples.length - positives)),
    examples.length / (2 * positives),
  ];
  const random = seededRandom(seed);
  const order = [...examples];
  let blockSums = new Float64Array(64);
  let blockCounts = new Int32Array(64);
  for (let epoch = 0; epoch < EPOCHS; epoch++) {
    const rate = LEARNING_RATE / (1 + epoch * 0.5);
    shuffleInPlace(order, random);
    for (const example of order) {
      const { buckets, blocks, blockCount, label } = example;
      if (blockSums.length < blockCount) {
        blockSums = new Float64Array(blockCount * 2);
        blockCounts = new Int32Array(blockCount * 2);
      }
      blockSums.fill(0, 0, blockCount);
      blockCounts.fill(0, 0, blockCount);
      for (let e = 0; e < buckets.length; e++) {
        const block = blocks[e] as number;
        blockSums[block] = (blockSums[block] as number) + (weights[buckets[e] as number] as number);
        blockCounts[block] = (blockCounts[block] as number) + 1;
      }
      const windowCount = Math.max(1, blockCount - windowBlocks + 1);
      const windows: { start: number; end: number; logit: number; eventCount: number }[] = [];
      for (let start = 0; start < windowCount; start++) {
        const end = Math.min(blockCount, start + windowBlocks);
        let sum = 0;
        let eventCount = 0;
        for (let b = start; b < end; b++) {
          sum += blockSums[b] as number;
          eventCount += blockCounts[b] as number;
        }
        windows.push({ start, end, logit: windowLogit(bias, sum, eventCount), eventCount });
      }
      const chosen =
        epoch === 0
          ? windows
          : [windows.reduce((best, window) => (window.logit > best.logit ? window : best))];
      const share = 1 / chosen.length;
      for (const window of chosen) {
        if (window.eventCount === 0) continue;
        const gradient = (sigmoid(window.logit) - label) * (classWeight[label] as number) * share;
        const step = (rate * gradient) / Math.sqrt(window.eventCount);
        for (let e = 0; e < buckets.length; e++) {
          const block = blocks[e] as number;
          if (block < window.start || block >= window.end) continue;
          const bucket = buckets[e] as number;
          const weight = weights[bucket] as number;
          weights[bucket] = weight - step - rate * L2 * weight;
        }
        bias -= rate * gradient * 0.1;
      }
    }
  }
  return { weights, bias };
}

/** The head as it will be shipped: quantised weights, rule boost, calibration still neutral. */
function quantizedHead(head: LinearHead, windowBlocks: number): CalibratedHead {
  const { scale, quantized } = quantizeWeights(head.weights);
  return {
    bits: HASH_BITS,
    windowBlocks,
    weights: quantized,
    weightScale: scale,
    bias: head.bias,
    ruleBoost: RULE_BOOST,
    threshold: 0,
    slope: 1,
  };
}

interface ScoredLogit {
  readonly row: LabelledText;
  readonly logit: number;
}

/**
 * The operating point: the logit threshold with the best F1 on dev among those whose false-positive
 * rate on the trap negatives (notinject for requests, clean tool outputs for responses) stays within
 * the limit. Ties go to the higher threshold (fewer false positives on unseen data).
 */
function chooseThreshold(scored: readonly ScoredLogit[], direction: FirewallDirection): number {
  const isTrap =
    direction === "request"
      ? (row: LabelledText) => row.subset === "notinject"
      : (row: LabelledText) => row.label === 0 && isCleanToolOutput(row.subset);
  const limit = direction === "request" ? MAX_REQUEST_TRAP_FPR : MAX_RESPONSE_CLEAN_FPR;
  const candidates = [...new Set(scored.map(({ logit }) => logit))].sort((a, b) => a - b);
  let best = { threshold: candidates.at(-1) ?? 0, f1: -1 };
  for (const threshold of candidates) {
    const all = emptyCounts();
    const trap = emptyCounts();
    for (const { row, logit } of scored) {
      countOne(all, row.label, logit >= threshold);
      if (isTrap(row)) countOne(trap, row.label, logit >= threshold);
    }
    if (trap.fp > limit * (trap.fp + trap.tn)) continue;
    const score = f1(all);
    if (score >= best.f1) best = { threshold, f1: score };
  }
  return best.threshold;
}

/** Platt slope with the offset fixed at the threshold: the log-loss-minimising slope on a grid. */
function fitSlope(scored: readonly ScoredLogit[], threshold: number): number {
  let best = { slope: 1, loss: Number.POSITIVE_INFINITY };
  for (let slope = 0.05; slope <= 5; slope += 0.05) {
    let loss = 0;
    for (const { row, logit } of scored) {
      const p = Math.min(1 - 1e-9, Math.max(1e-9, sigmoid(slope * (logit - threshold))));
      loss -= row.label === 1 ? Math.log(p) : Math.log(1 - p);
    }
    if (loss < best.loss) best = { slope: Number(slope.toFixed(2)), loss };
  }
  return best.slope;
}

/**
 * Each head learns from its own direction only. Measured alternatives:
 * - request head plus the tool-output injections: fewer false positives on unseen benign prompts
 *   (held-out wildguard 6.7% -> 1.8%), but it learned the shortcut "structured text = injection" and
 *   flagged 114 of 122 clean dev tool outputs (an e-mail body or a table sent as a tool argument would
 *   be blocked); with the clean tool outputs added as well, held-out wildguard false positives rose to 15%;
 * - response head plus the injected prompts (weighted 0.3 to 1): hand-written generic injections scored
 *   higher and held-out recall rose (0.90 -> 0.95), but held-out clean false positives rose too
 *   (36% -> 51-55%) and dev recall fell (0.88 -> 0.84); with all prompts dev recall fell further.
 */
function isTrainingRowFor(direction: FirewallDirection, row: LabelledText): boolean {
  return row.direction === direction;
}

/** Trains both heads on `train`, calibrates them on `dev`. */
function trainModel(
  train: readonly LabelledText[],
  dev: readonly LabelledText[],
  seed: number,
): BuiltinModel {
  const heads = {} as Record<FirewallDirection, CalibratedHead>;
  for (const direction of ["request", "response"] as const) {
    const examples = train.filter((row) => isTrainingRowFor(direction, row)).map(toExample);
    const uncalibrated = quantizedHead(
      trainHead(examples, WINDOW_BLOCKS[direction], seed),
      WINDOW_BLOCKS[direction],
    );
    const probe: BuiltinModel = { heads: { request: uncalibrated, response: uncalibrated } };
    const scored = dev
      .filter((row) => row.direction === direction)
      .map((row) => ({ row, logit: rawLogit(probe, row.text, direction).logit }));
    const threshold = chooseThreshold(scored, direction);
    heads[direction] = { ...uncalibrated, threshold, slope: fitSlope(scored, threshold) };
  }
  return { heads };
}

function scoreAll(model: BuiltinModel, rows: readonly LabelledText[]): ScoredText[] {
  const detector = createBuiltinDetector(model);
  return rows.map((row) => ({
    row,
    score: (detector.score(row.text, row.direction) as { score: number }).score,
  }));
}

function main(): void {
  const started = Date.now();
  const rows = loadInjectionData();
  const { train, dev } = splitBySubset(rows);

  // Generalisation: a model that never sees the held-out subsets, calibrated on the rest of dev.
  const generalisation = trainModel(
    train.filter((row) => !isHeldOutSubset(row.subset)),
    dev.filter((row) => !isHeldOutSubset(row.subset)),
    SPLIT_SEED,
  );
  const heldOutScored = scoreAll(
    generalisation,
    rows.filter((row) => isHeldOutSubset(row.subset)),
  );
  const heldOut: Record<string, [string, Counts][]> = {};
  for (const direction of ["request", "response"] as const) {
    heldOut[direction] = countsBySubset(
      heldOutScored.filter(({ row }) => row.direction === direction),
      0.5,
    );
    console.log(
      `${formatCountsTable(`Held-out subsets (${direction}), model trained without them, score >= 0.5`, heldOut[direction] ?? [], REPORT_AGGREGATES[direction])}\n`,
    );
  }

  const model = trainModel(train, dev, SPLIT_SEED);
  const devScored = scoreAll(model, dev);
  for (const direction of ["request", "response"] as const) {
    const head = model.heads[direction];
    console.log(
      `${formatCountsTable(
        `Dev split (${direction}), shipped model, score >= 0.5 (logit threshold ${head.threshold.toFixed(3)}, slope ${head.slope})`,
        countsBySubset(
          devScored.filter(({ row }) => row.direction === direction),
          0.5,
        ),
        REPORT_AGGREGATES[direction],
      )}\n`,
    );
  }
  const text = serializeModel({
    heads: model.heads,
    training: {
      seed: SPLIT_SEED,
      trainRows: train.length,
      devRows: dev.length,
      heldOutSubsets: heldOut,
    },
  });
  writeFileSync(MODEL_PATH, text);
  console.log(
    `Wrote ${MODEL_PATH.pathname} (${(text.length / 1024).toFixed(0)} KiB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

try {
  main();
} catch (error) {
  // A missing or malformed data or model file is an operator's problem: its message, not a stack trace.
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
