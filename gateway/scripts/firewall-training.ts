// Training of the built-in prompt-injection classifier, shared by train-firewall.ts (the shipped model)
// and measure-firewall-generalisation.ts (leave-one-family-out figures), so both train exactly alike.
//
// Model: one logistic-regression head per direction (request = direct prompts, response = tool outputs)
// over the hashed features of src/firewall/features.ts, scored on windows of consecutive 128-character
// blocks (max over windows, src/firewall/window-classifier.ts; window lengths in WINDOW_BLOCKS).
// Training is multiple-instance: the first epoch learns from every window of every text, later epochs
// from each text's highest-scoring window, which is what inference looks at (a benign text must have no
// suspicious window; an injected one needs one).

import { createBuiltinDetector, rawLogit } from "../src/firewall/builtin-detector.ts";
import type { FirewallDirection } from "../src/firewall/detector.ts";
import { extractFeatures } from "../src/firewall/features.ts";
import { type BuiltinModel, type CalibratedHead, quantizeWeights } from "../src/firewall/model-file.ts";
import { normalizeText } from "../src/firewall/normalize.ts";
import { windowLogit } from "../src/firewall/window-classifier.ts";
import {
  COMMITTED_CLEAN_SUBSETS,
  type LabelledText,
  seededRandom,
  shuffleInPlace,
} from "./firewall-dataset.ts";
import {
  type Counts,
  countOne,
  emptyCounts,
  f1,
  isCleanToolOutput,
  type ScoredText,
} from "./firewall-metrics.ts";
import { plantInjections } from "./planted-injections.ts";

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
 * The trap group of a dev row, or undefined: notinject for requests; for responses the clean tool
 * outputs of the injection data, and each committed clean corpus on its own. Each group must stay within
 * the limit by itself: the committed corpora are large and easy, and pooled with the injection data's
 * clean outputs they would let those rise well past the limit.
 */
function trapGroup(row: LabelledText, direction: FirewallDirection): string | undefined {
  if (direction === "request") return row.subset === "notinject" ? "notinject" : undefined;
  if (row.label !== 0 || !isCleanToolOutput(row.subset)) return undefined;
  return COMMITTED_CLEAN_SUBSETS.includes(row.subset) ? row.subset : "injection-data";
}

/**
 * The operating point: the logit threshold with the best F1 on dev among those whose false-positive
 * rate on every trap group (trapGroup) stays within the limit. Ties go to the higher threshold (fewer
 * false positives on unseen data).
 */
function chooseThreshold(scored: readonly ScoredLogit[], direction: FirewallDirection): number {
  const limit = direction === "request" ? MAX_REQUEST_TRAP_FPR : MAX_RESPONSE_CLEAN_FPR;
  const candidates = [...new Set(scored.map(({ logit }) => logit))].sort((a, b) => a - b);
  let best = { threshold: candidates.at(-1) ?? 0, f1: -1 };
  for (const threshold of candidates) {
    const all = emptyCounts();
    const traps = new Map<string, Counts>();
    for (const { row, logit } of scored) {
      countOne(all, row.label, logit >= threshold);
      const group = trapGroup(row, direction);
      if (group === undefined) continue;
      const trap = traps.get(group) ?? emptyCounts();
      countOne(trap, row.label, logit >= threshold);
      traps.set(group, trap);
    }
    if ([...traps.values()].some((trap) => trap.fp > limit * (trap.fp + trap.tn))) continue;
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
 *   (36% -> 51-55%) and dev recall fell (0.88 -> 0.84); with all prompts dev recall fell further;
 * - response head plus the benign prompts as negatives (benignPromptsAsResponses, kept for the measurement
 *   script): leave-one-family-out recall 0.60 -> 0.33 and dev recall 0.92 -> 0.82, since an injected task
 *   and a benign prompt are the same kind of text; not used.
 */
function isTrainingRowFor(
  direction: FirewallDirection,
  row: LabelledText,
  options: TrainingOptions,
): boolean {
  if (row.direction === direction) return true;
  return (
    direction === "response" &&
    options.benignPromptsAsResponses === true &&
    row.label === 0 &&
    row.direction === "request"
  );
}

export interface TrainingOptions {
  /** Benign prompts (wildguard, jackhhao, notinject) as extra response-head negatives. */
  readonly benignPromptsAsResponses?: boolean;
  /**
   * Generic injections planted into this many training rows of the committed clean corpora, as extra
   * response-head positives (planted-injections.ts); none when absent.
   */
  readonly plantedInjections?: number;
  /** Train only these heads (measurements that look at one direction); both when absent. */
  readonly directions?: readonly FirewallDirection[];
}

/** Trains both heads on `train`, calibrates them on `dev`. */
export function trainModel(
  train: readonly LabelledText[],
  dev: readonly LabelledText[],
  seed: number,
  options: TrainingOptions = {},
): BuiltinModel {
  const heads = {} as Record<FirewallDirection, CalibratedHead>;
  const directions = options.directions ?? (["request", "response"] as const);
  for (const direction of directions) {
    const rows = train.filter((row) => isTrainingRowFor(direction, row, options));
    if (direction === "response" && options.plantedInjections !== undefined) {
      const hosts = rows.filter((row) => COMMITTED_CLEAN_SUBSETS.includes(row.subset));
      rows.push(...plantInjections(hosts, options.plantedInjections, seededRandom(seed)));
    }
    const examples = rows.map(toExample);
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
  heads.request ??= heads.response;
  heads.response ??= heads.request;
  return { heads };
}

export function scoreAll(model: BuiltinModel, rows: readonly LabelledText[]): ScoredText[] {
  const detector = createBuiltinDetector(model);
  return rows.map((row) => ({
    row,
    score: (detector.score(row.text, row.direction) as { score: number }).score,
  }));
}
