// Scores a (normalised) text with one head of the linear classifier: the logit of the most
// suspicious window. Windows are WINDOW_BLOCKS blocks of BLOCK_CHARS characters (512 characters)
// stepping by one block (128 characters), so an instruction buried at the end of a long benign text is
// judged next to its own context instead of being averaged away. Work is linear in the text: one
// feature pass, one add per event into its block, one add and one subtract per window.

import { extractFeatures, WINDOW_BLOCKS } from "./features.ts";

export interface ClassifierHead {
  /** The weight table has 2^bits entries, indexed by the hashed feature events. */
  readonly bits: number;
  readonly weights: Float32Array;
  readonly bias: number;
}

/**
 * The logit of one window from the sum of its events' weights and their number. Dividing by the square
 * root of the number keeps long and short windows on one scale (an L2-like normalisation of counts).
 */
export function windowLogit(bias: number, weightSum: number, eventCount: number): number {
  return eventCount === 0 ? bias : bias + weightSum / Math.sqrt(eventCount);
}

let blockSums = new Float64Array(256);
let blockCounts = new Int32Array(256);

/** The highest window logit of `text` under `head`. */
export function maxWindowLogit(head: ClassifierHead, text: string): number {
  const events = extractFeatures(text, head.bits);
  const blockCount = events.blockCount;
  if (blockSums.length < blockCount) {
    blockSums = new Float64Array(blockCount * 2);
    blockCounts = new Int32Array(blockCount * 2);
  }
  blockSums.fill(0, 0, blockCount);
  blockCounts.fill(0, 0, blockCount);
  const { buckets, blocks, count } = events;
  const weights = head.weights;
  for (let e = 0; e < count; e++) {
    const block = blocks[e] as number;
    blockSums[block] = (blockSums[block] as number) + (weights[buckets[e] as number] as number);
    blockCounts[block] = (blockCounts[block] as number) + 1;
  }
  const firstWindowBlocks = Math.min(WINDOW_BLOCKS, blockCount);
  let sum = 0;
  let eventCount = 0;
  for (let b = 0; b < firstWindowBlocks; b++) {
    sum += blockSums[b] as number;
    eventCount += blockCounts[b] as number;
  }
  let best = windowLogit(head.bias, sum, eventCount);
  for (let end = firstWindowBlocks; end < blockCount; end++) {
    const start = end - WINDOW_BLOCKS;
    sum += (blockSums[end] as number) - (blockSums[start] as number);
    eventCount += (blockCounts[end] as number) - (blockCounts[start] as number);
    const logit = windowLogit(head.bias, sum, eventCount);
    if (logit > best) best = logit;
  }
  return best;
}
