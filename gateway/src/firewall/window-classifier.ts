// Scores a (normalised) text with one head of the linear classifier: the logit of the most
// suspicious window. Windows are `windowBlocks` blocks of BLOCK_CHARS (128) characters stepping by one
// block (the shipped request head uses 4 blocks = 512 characters, the response head 2 blocks = 256), so
// an instruction buried at the end of a long benign text is judged next to its own context instead of
// being averaged away. Work is linear in the text: one
// feature pass adding each event's weight into its block, one add and one subtract per window.

import { blockWeightSums } from "./features.ts";

export interface ClassifierHead {
  /** The weight table has 2^bits entries, indexed by the hashed feature events. */
  readonly bits: number;
  /** Blocks of BLOCK_CHARS characters per window. */
  readonly windowBlocks: number;
  /** int8-quantised weights (weight = q * weightScale): 2^bits bytes stay in the CPU cache. */
  readonly weights: Int8Array;
  readonly weightScale: number;
  readonly bias: number;
}

/**
 * The logit of one window from the sum of its events' weights and their number. Dividing by the square
 * root of the number keeps long and short windows on one scale (an L2-like normalisation of counts).
 */
export function windowLogit(bias: number, weightSum: number, eventCount: number): number {
  return eventCount === 0 ? bias : bias + weightSum / Math.sqrt(eventCount);
}

/** The highest window logit of `text` under `head`. */
export function maxWindowLogit(head: ClassifierHead, text: string): number {
  return scoreWindows(head, text).logit;
}

/** The highest window logit of `text`, and its longest base64-alphabet run (found in the same pass). */
export function scoreWindows(
  head: ClassifierHead,
  text: string,
): { logit: number; longestBase64Run: number } {
  const { sums, counts, blockCount, longestBase64Run } = blockWeightSums(text, head.bits, head.weights);
  const scale = head.weightScale;
  const windowBlocks = head.windowBlocks;
  const firstWindowBlocks = Math.min(windowBlocks, blockCount);
  let sum = 0;
  let eventCount = 0;
  for (let b = 0; b < firstWindowBlocks; b++) {
    sum += sums[b] as number;
    eventCount += counts[b] as number;
  }
  let best = windowLogit(head.bias, sum * scale, eventCount);
  for (let end = firstWindowBlocks; end < blockCount; end++) {
    const start = end - windowBlocks;
    sum += (sums[end] as number) - (sums[start] as number);
    eventCount += (counts[end] as number) - (counts[start] as number);
    const logit = windowLogit(head.bias, sum * scale, eventCount);
    if (logit > best) best = logit;
  }
  return { logit: best, longestBase64Run };
}
