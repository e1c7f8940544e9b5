// The built-in classifier's model file: two heads (request = prompts a client sends, response = tool
// outputs) with int8-quantised hashed weights in base64, and the calibration that puts each head's
// recommended operating point at score 0.5. Written by scripts/train-firewall.ts, read by
// builtin-detector.ts.

import type { FirewallDirection } from "./detector.ts";
import type { ClassifierHead } from "./window-classifier.ts";

export const MODEL_FORMAT = "svc-injection-classifier/1";

export interface CalibratedHead extends ClassifierHead {
  /** Added to the logit for each wrapper rule that fires (at most MAX_BOOSTED_RULES of them). */
  readonly ruleBoost: number;
  /** score = sigmoid(slope * (logit - threshold)): the chosen operating point lands on 0.5. */
  readonly threshold: number;
  readonly slope: number;
}

export interface BuiltinModel {
  readonly heads: Readonly<Record<FirewallDirection, CalibratedHead>>;
  /** Free-form facts about the training run (data split, measured figures), kept for the eval report. */
  readonly training?: unknown;
}

interface HeadFile {
  bits: number;
  windowBlocks: number;
  bias: number;
  weightScale: number;
  weightsInt8: string;
  ruleBoost: number;
  threshold: number;
  slope: number;
}

/** int8 quantisation: weight ≈ q * scale with q in [-127, 127]. */
export function quantizeWeights(weights: Float32Array): { scale: number; quantized: Int8Array } {
  let largest = 0;
  for (const weight of weights) largest = Math.max(largest, Math.abs(weight));
  const scale = largest === 0 ? 1 : largest / 127;
  const quantized = new Int8Array(weights.length);
  for (let i = 0; i < weights.length; i++) quantized[i] = Math.round((weights[i] as number) / scale);
  return { scale, quantized };
}

/** The JSON text of a model. */
export function serializeModel(model: BuiltinModel): string {
  const heads: Record<string, HeadFile> = {};
  for (const direction of ["request", "response"] as const) {
    const head = model.heads[direction];
    const quantized = head.weights;
    heads[direction] = {
      bits: head.bits,
      windowBlocks: head.windowBlocks,
      bias: head.bias,
      weightScale: head.weightScale,
      weightsInt8: Buffer.from(quantized.buffer, quantized.byteOffset, quantized.byteLength).toString(
        "base64",
      ),
      ruleBoost: head.ruleBoost,
      threshold: head.threshold,
      slope: head.slope,
    };
  }
  return `${JSON.stringify({ format: MODEL_FORMAT, heads, training: model.training }, null, 2)}\n`;
}

function finiteNumber(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new Error(`model file: ${what} must be a number`);
  return value;
}

/** Parses and checks a model file's JSON text; throws naming the first bad field. */
export function parseModel(json: string): BuiltinModel {
  const file = JSON.parse(json) as {
    format?: unknown;
    heads?: Record<string, Partial<HeadFile>>;
    training?: unknown;
  };
  if (file.format !== MODEL_FORMAT) throw new Error(`model file: format must be '${MODEL_FORMAT}'`);
  const heads = {} as Record<FirewallDirection, CalibratedHead>;
  for (const direction of ["request", "response"] as const) {
    const head = file.heads?.[direction];
    if (head === undefined) throw new Error(`model file: head '${direction}' is missing`);
    const bits = finiteNumber(head.bits, `${direction}.bits`);
    if (!Number.isInteger(bits) || bits < 8 || bits > 24)
      throw new Error(`model file: ${direction}.bits must be 8..24`);
    const windowBlocks = finiteNumber(head.windowBlocks, `${direction}.windowBlocks`);
    if (!Number.isInteger(windowBlocks) || windowBlocks < 1 || windowBlocks > 64) {
      throw new Error(`model file: ${direction}.windowBlocks must be 1..64`);
    }
    if (typeof head.weightsInt8 !== "string")
      throw new Error(`model file: ${direction}.weightsInt8 must be base64`);
    const bytes = Buffer.from(head.weightsInt8, "base64");
    if (bytes.length !== 1 << bits) {
      throw new Error(
        `model file: ${direction}.weightsInt8 holds ${bytes.length} weights, expected ${1 << bits}`,
      );
    }
    heads[direction] = {
      bits,
      windowBlocks,
      bias: finiteNumber(head.bias, `${direction}.bias`),
      weights: new Int8Array(bytes),
      weightScale: finiteNumber(head.weightScale, `${direction}.weightScale`),
      ruleBoost: finiteNumber(head.ruleBoost, `${direction}.ruleBoost`),
      threshold: finiteNumber(head.threshold, `${direction}.threshold`),
      slope: finiteNumber(head.slope, `${direction}.slope`),
    };
  }
  return { heads, training: file.training };
}
