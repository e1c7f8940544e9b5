// A prompt-injection detector from a model file the gateway's operator supplies: a text classifier exported to ONNX
// (Meta Prompt Guard, a DeBERTa injection classifier) run in process by onnxruntime-node, with the tokenizer that
// came with it. Both libraries are optional dependencies, loaded only when a detector of type onnx is configured,
// so a gateway without one needs neither the native runtime nor its size.
//
// The model directory holds what a Hugging Face ONNX export writes:
//   model.onnx (or onnx/model.onnx)  the classifier; inputs among input_ids, attention_mask, token_type_ids;
//                                    one output of logits [batch, labels]
//   tokenizer.json                   the tokenizer (any kind the tokenizers library reads)
//   config.json                      id2label: which logit is which label
//   tokenizer_config.json            optional: model_max_length
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Tokenizer } from "@huggingface/tokenizers";
import type { InferenceSession, Tensor } from "onnxruntime-node";
import {
  type Detection,
  type Detector,
  DetectorUnavailableError,
  type FirewallDirection,
} from "./detector.ts";

export interface OnnxDetectorOptions {
  /** Names the detector (`onnx:<name>`) in audit records, metrics and errors. */
  readonly name: string;
  /** The model directory. */
  readonly path: string;
  /** Labels (from config.json id2label, case-insensitive) whose probabilities add up to the score. Default: every
   * label whose name contains INJECTION or JAILBREAK. */
  readonly injectionLabels?: readonly string[];
  /** Tokens the model sees, special tokens included; the rest of a longer text is cut. Default: the tokenizer's
   * model_max_length, else 512. */
  readonly maxTokens?: number;
}

export const DEFAULT_MAX_TOKENS = 512;
/** No classifier the gateway would run reads more; a bigger maxTokens is a typo. */
export const MAX_MAX_TOKENS = 8192;
/** Text past maxTokens × this many characters cannot fit in the tokens the model sees, so it is never tokenized:
 * tokenizing a megabyte only to cut it would cost more than the inference. */
const MAX_CHARS_PER_TOKEN = 32;
/** Bounds of the JSON files read whole into memory (a multilingual tokenizer.json is about 20 MB). */
const MAX_TOKENIZER_BYTES = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const MODEL_FILES = ["model.onnx", join("onnx", "model.onnx")];
const KNOWN_INPUTS = ["input_ids", "attention_mask", "token_type_ids"] as const;
type KnownInput = (typeof KNOWN_INPUTS)[number];
const DEFAULT_INJECTION_LABEL = /INJECTION|JAILBREAK/i;

type OnnxRuntime = typeof import("onnxruntime-node");
type Tokenizers = typeof import("@huggingface/tokenizers");

interface ModelInput {
  readonly name: KnownInput;
  readonly type: "int64" | "int32";
}

/** One encoded text: ids, mask and token types of equal length. */
interface TokenRows {
  readonly ids: readonly number[];
  readonly mask: readonly number[];
  readonly types: readonly number[];
}

export async function loadOnnxDetector(options: OnnxDetectorOptions): Promise<Detector> {
  const name = `onnx:${options.name}`;
  const where = `onnx detector '${options.name}'`;
  const [ort, tokenizers] = await optionalDependencies();
  const modelFile = await findModelFile(options.path, where);
  const config = await readJson(join(options.path, "config.json"), MAX_CONFIG_BYTES, where);
  const labels = labelsOf(config, where);
  const injection = injectionIndexes(labels, options.injectionLabels, where);
  const tokenizerJson = await readJson(join(options.path, "tokenizer.json"), MAX_TOKENIZER_BYTES, where);
  const tokenizerConfig = await readOptionalJson(join(options.path, "tokenizer_config.json"), where);
  const maxTokens = maxTokensOf(options.maxTokens, tokenizerConfig, where);
  let tokenizer: Tokenizer;
  try {
    tokenizer = new tokenizers.Tokenizer(tokenizerJson, tokenizerConfig ?? {});
  } catch (error) {
    throw new Error(`${where}: tokenizer.json could not be read as a tokenizer: ${messageOf(error)}`, {
      cause: error,
    });
  }
  let session: InferenceSession;
  try {
    // One thread per inference: the gateway runs several at once on a few cores, and each should not fan out.
    session = await ort.InferenceSession.create(modelFile, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
  } catch (error) {
    throw new Error(`${where}: ${modelFile} could not be loaded by onnxruntime: ${messageOf(error)}`, {
      cause: error,
    });
  }
  try {
    const inputs = modelInputs(session, where);
    const output = logitsOutput(session, where);
    let closed = false;
    /** Inferences in flight: close() waits for them, since releasing a session under a running inference is not
     * something onnxruntime promises to survive. */
    const running = new Set<Promise<unknown>>();

    async function logits(text: string): Promise<Float32Array | Float64Array> {
      const rows = encode(tokenizer, text.slice(0, maxTokens * MAX_CHARS_PER_TOKEN), maxTokens);
      const feeds: Record<string, Tensor> = {};
      for (const input of inputs) feeds[input.name] = tensor(ort, input, rows);
      const run = session.run(feeds);
      running.add(run);
      const result = await run.finally(() => running.delete(run));
      const values = result[output]?.data;
      if (!(values instanceof Float32Array || values instanceof Float64Array)) {
        throw new Error(`output '${output}' is not a float tensor`);
      }
      if (values.length !== labels.length) {
        throw new Error(
          `output '${output}' has ${values.length} values but config.json id2label names ${labels.length} labels`,
        );
      }
      return values;
    }

    // One inference at load: a model that does not fit its config fails now, not on the first message.
    await logits("hello").catch((error: unknown) => {
      throw new Error(`${where}: the model does not run with its tokenizer and config: ${messageOf(error)}`, {
        cause: error,
      });
    });

    return {
      name,
      async score(text: string, _direction: FirewallDirection): Promise<Detection> {
        if (closed)
          throw new DetectorUnavailableError(name, "the detector was closed by a configuration reload");
        let values: Float32Array | Float64Array;
        try {
          values = await logits(text);
        } catch (error) {
          throw new DetectorUnavailableError(name, `inference failed: ${messageOf(error)}`, { cause: error });
        }
        const probabilities = softmax(values);
        let score = 0;
        let likeliest = injection[0] as number;
        for (const index of injection) {
          score += probabilities[index] as number;
          if ((probabilities[index] as number) > (probabilities[likeliest] as number)) likeliest = index;
        }
        if (Number.isNaN(score)) throw new DetectorUnavailableError(name, "the model answered NaN logits");
        score = Math.min(1, Math.max(0, score));
        return score >= 0.5 ? { score, rules: [labels[likeliest] as string] } : { score };
      },
      async close() {
        if (closed) return;
        closed = true;
        await Promise.allSettled(running);
        await session.release();
      },
    };
  } catch (error) {
    await session.release();
    throw error;
  }
}

async function optionalDependencies(): Promise<[OnnxRuntime, Tokenizers]> {
  const install =
    "install onnxruntime-node and @huggingface/tokenizers (npm install onnxruntime-node @huggingface/tokenizers) to use detectors of type onnx";
  try {
    return await Promise.all([import("onnxruntime-node"), import("@huggingface/tokenizers")]);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new Error(`${install}: ${messageOf(error)}`, { cause: error });
    }
    // Installed but its native library does not load (another CPU, another libc): say so, not "install it".
    throw new Error(`onnxruntime-node is installed but could not be loaded: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

async function findModelFile(directory: string, where: string): Promise<string> {
  for (const file of MODEL_FILES) {
    const candidate = join(directory, file);
    const found = await stat(candidate).catch(() => undefined);
    if (found?.isFile() === true) return candidate;
  }
  throw new Error(`${where}: path '${directory}' holds no ${MODEL_FILES.join(" or ")}`);
}

async function readJson(file: string, maxBytes: number, where: string): Promise<unknown> {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined || !found.isFile()) throw new Error(`${where}: ${file} is missing`);
  if (found.size > maxBytes) throw new Error(`${where}: ${file} is larger than ${maxBytes} bytes`);
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new Error(`${where}: ${file} is not JSON: ${messageOf(error)}`, { cause: error });
  }
}

async function readOptionalJson(file: string, where: string): Promise<Record<string, unknown> | undefined> {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined) return undefined;
  const json = await readJson(file, MAX_CONFIG_BYTES, where);
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    throw new Error(`${where}: ${file} is not a JSON object`);
  }
  return json as Record<string, unknown>;
}

/** config.json id2label: {"0": "BENIGN", "1": "INJECTION"} → ["BENIGN", "INJECTION"], indexes 0..n-1 all named. */
function labelsOf(config: unknown, where: string): string[] {
  const id2label = (config as { id2label?: unknown } | null)?.id2label;
  if (id2label === null || typeof id2label !== "object" || Array.isArray(id2label)) {
    throw new Error(`${where}: config.json has no id2label object (which output is which label)`);
  }
  const entries = Object.entries(id2label);
  const labels: string[] = [];
  for (const [index, label] of entries) {
    const at = Number(index);
    if (!Number.isInteger(at) || at < 0 || at >= entries.length || typeof label !== "string") {
      throw new Error(`${where}: config.json id2label must map 0..n-1 to label names, got "${index}"`);
    }
    labels[at] = label;
  }
  if (labels.length < 2) throw new Error(`${where}: config.json id2label names fewer than 2 labels`);
  return labels;
}

function injectionIndexes(
  labels: readonly string[],
  wanted: readonly string[] | undefined,
  where: string,
): number[] {
  const available = labels.join(", ");
  if (wanted === undefined) {
    const indexes = labels.flatMap((label, index) => (DEFAULT_INJECTION_LABEL.test(label) ? [index] : []));
    if (indexes.length === 0) {
      throw new Error(
        `${where}: no model label contains INJECTION or JAILBREAK (labels: ${available}); set injectionLabels`,
      );
    }
    return indexes;
  }
  if (wanted.length === 0) throw new Error(`${where}: injectionLabels is empty (labels: ${available})`);
  return wanted.map((label) => {
    const index = labels.findIndex((candidate) => candidate.toLowerCase() === label.toLowerCase());
    if (index < 0)
      throw new Error(`${where}: injectionLabels names '${label}', not a model label (${available})`);
    return index;
  });
}

function maxTokensOf(
  configured: number | undefined,
  tokenizerConfig: Record<string, unknown> | undefined,
  where: string,
): number {
  if (configured !== undefined) {
    if (!Number.isInteger(configured) || configured < 2 || configured > MAX_MAX_TOKENS) {
      throw new Error(
        `${where}: maxTokens must be an integer from 2 to ${MAX_MAX_TOKENS}, got ${configured}`,
      );
    }
    return configured;
  }
  // Tokenizers without a limit of their own carry a huge placeholder (1e30): only a plausible value counts.
  const fromTokenizer = tokenizerConfig?.model_max_length;
  if (typeof fromTokenizer === "number" && Number.isInteger(fromTokenizer) && fromTokenizer >= 2) {
    if (fromTokenizer <= MAX_MAX_TOKENS) return fromTokenizer;
  }
  return DEFAULT_MAX_TOKENS;
}

function modelInputs(session: InferenceSession, where: string): ModelInput[] {
  return session.inputMetadata.map((input) => {
    if (!(KNOWN_INPUTS as readonly string[]).includes(input.name)) {
      throw new Error(`${where}: model input '${input.name}' is not one of ${KNOWN_INPUTS.join(", ")}`);
    }
    const type = input.isTensor ? input.type : undefined;
    if (type !== "int64" && type !== "int32") {
      throw new Error(
        `${where}: model input '${input.name}' must be an int64 or int32 tensor, not ${String(type)}`,
      );
    }
    return { name: input.name as KnownInput, type };
  });
}

function logitsOutput(session: InferenceSession, where: string): string {
  const names = session.outputNames;
  if (names.includes("logits")) return "logits";
  if (names.length === 1) return names[0] as string;
  throw new Error(`${where}: the model has outputs ${names.join(", ")} and none is named logits`);
}

/** Encodes with the tokenizer's special tokens; a text longer than maxTokens keeps its start and the template's
 * tokens around it (a classifier reads [CLS] … [SEP] even when the rest of the text is cut). */
function encode(tokenizer: Tokenizer, text: string, maxTokens: number): TokenRows {
  const full = tokenizer.encode(text, { return_token_type_ids: true });
  const unknown = full.ids.findIndex((id: number | undefined) => typeof id !== "number");
  if (unknown >= 0) {
    // The tokenizers library leaves a token it cannot map without an id when it finds no unk token.
    throw new Error(
      `the tokenizer gave token '${full.tokens[unknown]}' no id (does tokenizer.json name an unk_token?)`,
    );
  }
  const types = full.token_type_ids ?? full.ids.map(() => 0);
  if (full.ids.length <= maxTokens) return { ids: full.ids, mask: full.attention_mask, types };
  // full = template prefix + the text's own tokens + template suffix: find where the text's tokens sit.
  const bare = tokenizer.encode(text, { add_special_tokens: false }).ids;
  let before = 0;
  while (before + bare.length < full.ids.length && !startsAt(full.ids, bare, before)) before++;
  const after = full.ids.length - before - bare.length;
  const textTokens = maxTokens - before - after;
  const keep = (row: readonly number[]): number[] =>
    textTokens < 1
      ? row.slice(0, maxTokens)
      : [...row.slice(0, before + textTokens), ...row.slice(row.length - after)];
  return { ids: keep(full.ids), mask: keep(full.attention_mask), types: keep(types) };
}

function startsAt(row: readonly number[], part: readonly number[], at: number): boolean {
  // The first few tokens decide it: a template never repeats the text's opening tokens.
  const checked = Math.min(part.length, 16);
  for (let index = 0; index < checked; index++) if (row[at + index] !== part[index]) return false;
  return true;
}

function tensor(ort: OnnxRuntime, input: ModelInput, rows: TokenRows): Tensor {
  const row =
    input.name === "input_ids" ? rows.ids : input.name === "attention_mask" ? rows.mask : rows.types;
  const data = input.type === "int64" ? BigInt64Array.from(row, BigInt) : Int32Array.from(row);
  return new ort.Tensor(input.type, data, [1, row.length]);
}

function softmax(values: ArrayLike<number>): number[] {
  const max = Math.max(...Array.from(values));
  const exps = Array.from(values, (value) => Math.exp(value - max));
  const sum = exps.reduce((total, value) => total + value, 0);
  return exps.map((value) => value / sum);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
