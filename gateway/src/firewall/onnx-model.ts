// The ONNX classifier itself, as its worker thread runs it: the tokenizer turns a text into token rows, the
// onnxruntime session turns them into one logit per label. Everything here blocks the thread it runs on
// (onnxruntime-node's run is synchronous under its promise), which is why only onnx-worker.ts calls it.
import { readFile } from "node:fs/promises";
import type { Tokenizer } from "@huggingface/tokenizers";
import type { InferenceSession, Tensor } from "onnxruntime-node";

export interface OnnxModelFiles {
  readonly modelFile: string;
  readonly tokenizerFile: string;
  /** tokenizer_config.json's content, {} when the directory has none. */
  readonly tokenizerConfig: Record<string, unknown>;
  readonly maxTokens: number;
  /** How many labels config.json names: the model must answer that many logits. */
  readonly labelCount: number;
}

export interface OnnxModel {
  logits(text: string): Promise<Float32Array>;
  release(): Promise<void>;
}

/** Text past maxTokens × this many characters cannot fit in the tokens the model sees, so it is never tokenized:
 * tokenizing a megabyte only to cut it would cost more than the inference. */
export const MAX_CHARS_PER_TOKEN = 32;
const KNOWN_INPUTS = ["input_ids", "attention_mask", "token_type_ids"] as const;
type KnownInput = (typeof KNOWN_INPUTS)[number];
type OnnxRuntime = typeof import("onnxruntime-node");

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

/** Thrown when an optional dependency is not installed, so the detector can say what to install. */
export class MissingDependencyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MissingDependencyError";
  }
}

export async function loadOnnxModel(files: OnnxModelFiles): Promise<OnnxModel> {
  const [ort, tokenizers] = await optionalDependencies();
  let tokenizer: Tokenizer;
  try {
    tokenizer = new tokenizers.Tokenizer(
      JSON.parse(await readFile(files.tokenizerFile, "utf8")),
      files.tokenizerConfig,
    );
  } catch (error) {
    throw new Error(`tokenizer.json could not be read as a tokenizer: ${messageOf(error)}`, { cause: error });
  }
  let session: InferenceSession;
  try {
    // One thread per inference: the gateway's cores are for serving messages; a detector takes one of them.
    session = await ort.InferenceSession.create(files.modelFile, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
  } catch (error) {
    throw new Error(`${files.modelFile} could not be loaded by onnxruntime: ${messageOf(error)}`, {
      cause: error,
    });
  }
  try {
    const inputs = modelInputs(session);
    const output = logitsOutput(session);
    const model: OnnxModel = {
      async logits(text) {
        const rows = encode(tokenizer, text.slice(0, files.maxTokens * MAX_CHARS_PER_TOKEN), files.maxTokens);
        const feeds: Record<string, Tensor> = {};
        for (const input of inputs) feeds[input.name] = tensor(ort, input, rows);
        const values = (await session.run(feeds))[output]?.data;
        if (!(values instanceof Float32Array || values instanceof Float64Array)) {
          throw new Error(`output '${output}' is not a float tensor`);
        }
        if (values.length !== files.labelCount) {
          throw new Error(
            `output '${output}' has ${values.length} values but config.json id2label names ${files.labelCount} labels`,
          );
        }
        return Float32Array.from(values);
      },
      release: () => session.release(),
    };
    // One inference at load: a model that does not fit its tokenizer or config fails now, not on the first message.
    await model.logits("hello").catch((error: unknown) => {
      throw new Error(`the model does not run with its tokenizer and config: ${messageOf(error)}`, {
        cause: error,
      });
    });
    return model;
  } catch (error) {
    await session.release();
    throw error;
  }
}

async function optionalDependencies(): Promise<[OnnxRuntime, typeof import("@huggingface/tokenizers")]> {
  try {
    return await Promise.all([import("onnxruntime-node"), import("@huggingface/tokenizers")]);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new MissingDependencyError(messageOf(error), { cause: error });
    }
    // Installed but its native library does not load (another CPU, another libc): say so, not "install it".
    throw new Error(`onnxruntime-node is installed but could not be loaded: ${messageOf(error)}`, {
      cause: error,
    });
  }
}

function modelInputs(session: InferenceSession): ModelInput[] {
  return session.inputMetadata.map((input) => {
    if (!(KNOWN_INPUTS as readonly string[]).includes(input.name)) {
      throw new Error(`model input '${input.name}' is not one of ${KNOWN_INPUTS.join(", ")}`);
    }
    const type = input.isTensor ? input.type : undefined;
    if (type !== "int64" && type !== "int32") {
      throw new Error(`model input '${input.name}' must be an int64 or int32 tensor, not ${String(type)}`);
    }
    return { name: input.name as KnownInput, type };
  });
}

function logitsOutput(session: InferenceSession): string {
  const names = session.outputNames;
  if (names.includes("logits")) return "logits";
  if (names.length === 1) return names[0] as string;
  throw new Error(`the model has outputs ${names.join(", ")} and none is named logits`);
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

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
