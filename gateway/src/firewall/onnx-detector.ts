// A prompt-injection detector from a model file the gateway's operator supplies: a text classifier exported to ONNX
// (Meta Prompt Guard, a DeBERTa injection classifier) run by onnxruntime-node with the tokenizer that came with
// it, in a worker thread of its own (onnx-worker.ts). Both libraries are optional dependencies, loaded only when a
// detector of type onnx is configured, so a gateway without one needs neither the native runtime nor its size.
//
// The model directory holds what a Hugging Face ONNX export writes:
//   model.onnx (or onnx/model.onnx)  the classifier; inputs among input_ids, attention_mask, token_type_ids;
//                                    one output of logits [batch, labels]
//   tokenizer.json                   the tokenizer (any kind the tokenizers library reads)
//   config.json                      id2label: which logit is which label
//   tokenizer_config.json            optional: model_max_length
import { once } from "node:events";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import {
  type Detection,
  type Detector,
  DetectorUnavailableError,
  type FirewallDirection,
} from "./detector.ts";
import { messageOf, type OnnxModelFiles } from "./onnx-model.ts";
import type { CloseRequest, ScoreRequest, WorkerMessage } from "./onnx-worker.ts";

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
/** Texts waiting for one model: past this the detector is unavailable at once instead of queueing without end
 * behind a model that cannot keep up (on_error decides what that means). */
export const MAX_WAITING_TEXTS = 64;
/** How long a closing worker gets to release its model before it is terminated. */
const CLOSE_GRACE_MS = 5000;
/** Bounds of the JSON files read (a multilingual tokenizer.json is about 20 MB). */
const MAX_TOKENIZER_BYTES = 64 * 1024 * 1024;
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const MODEL_FILES = ["model.onnx", join("onnx", "model.onnx")];
const DEFAULT_INJECTION_LABEL = /INJECTION|JAILBREAK/i;
const INSTALL_HINT =
  "install onnxruntime-node and @huggingface/tokenizers (npm install onnxruntime-node @huggingface/tokenizers) to use detectors of type onnx";

interface Waiting {
  resolve(logits: Float32Array): void;
  reject(error: DetectorUnavailableError): void;
}

export async function loadOnnxDetector(options: OnnxDetectorOptions): Promise<Detector> {
  const name = `onnx:${options.name}`;
  const where = `onnx detector '${options.name}'`;
  const modelFile = await findModelFile(options.path, where);
  const labels = labelsOf(await readJson(join(options.path, "config.json"), MAX_CONFIG_BYTES, where), where);
  const injection = injectionIndexes(labels, options.injectionLabels, where);
  const tokenizerFile = join(options.path, "tokenizer.json");
  await checkFile(tokenizerFile, MAX_TOKENIZER_BYTES, where);
  const tokenizerConfig = (await readOptionalJson(join(options.path, "tokenizer_config.json"), where)) ?? {};
  const files: OnnxModelFiles = {
    modelFile,
    tokenizerFile,
    tokenizerConfig,
    maxTokens: maxTokensOf(options.maxTokens, tokenizerConfig, where),
    labelCount: labels.length,
  };

  // The worker module beside this one: .ts in a checkout (type stripping), .js in the compiled package.
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const worker = new Worker(new URL(`./onnx-worker.${extension}`, import.meta.url), { workerData: files });
  const [first] = (await Promise.race([
    once(worker, "message"),
    once(worker, "exit").then(([code]) => [{ type: "failed", message: `worker exited (${code})` }]),
  ]).catch((error: unknown) => [{ type: "failed", message: messageOf(error) }])) as [WorkerMessage];
  if (first.type !== "ready") {
    await worker.terminate();
    const message = first.type === "failed" ? first.message : `unexpected ${first.type} message`;
    if (first.type === "failed" && first.missingDependency) throw new Error(`${INSTALL_HINT}: ${message}`);
    throw new Error(`${where}: ${message}`);
  }

  const waiting = new Map<number, Waiting>();
  let nextId = 0;
  /** Why the detector no longer answers: closed by a reload, or its worker stopped. */
  let stopped: string | undefined;
  const stop = (reason: string): void => {
    stopped ??= reason;
    for (const call of waiting.values()) call.reject(new DetectorUnavailableError(name, reason));
    waiting.clear();
  };
  worker.on("message", (message: WorkerMessage) => {
    if (message.type !== "logits" && message.type !== "error") return;
    const call = waiting.get(message.id);
    waiting.delete(message.id);
    if (waiting.size === 0) worker.unref();
    if (message.type === "logits") call?.resolve(message.logits);
    else call?.reject(new DetectorUnavailableError(name, `inference failed: ${message.message}`));
  });
  worker.on("error", (error) => stop(`the model's worker failed: ${error.message}`));
  worker.on("exit", (code) => stop(`the model's worker stopped (exit code ${code})`));
  // An idle worker must not keep the process alive on its own; one with texts waiting must, or a process with
  // nothing else to do (a CLI scoring one text) would exit before the answer.
  worker.unref();

  function logits(text: string): Promise<Float32Array> {
    if (stopped !== undefined) return Promise.reject(new DetectorUnavailableError(name, stopped));
    if (waiting.size >= MAX_WAITING_TEXTS) {
      return Promise.reject(
        new DetectorUnavailableError(name, `busy: ${MAX_WAITING_TEXTS} texts already wait for the model`),
      );
    }
    const id = nextId++;
    return new Promise((resolve, reject) => {
      if (waiting.size === 0) worker.ref();
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, text } satisfies ScoreRequest);
    });
  }

  return {
    name,
    async score(text: string, _direction: FirewallDirection): Promise<Detection> {
      const probabilities = softmax(await logits(text));
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
      if (stopped !== undefined) return;
      // Texts still waiting end as unavailable instead of holding up the reload; ending the thread frees the model.
      stop("the detector was closed by a configuration reload");
      // The worker releases the model and ends by itself; terminating it inside native code can abort the process.
      // One that does not end within the bound is terminated all the same.
      const ended = once(worker, "exit");
      worker.postMessage({ type: "close" } satisfies CloseRequest);
      const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS);
      await ended;
      clearTimeout(timer);
    },
  };
}

async function findModelFile(directory: string, where: string): Promise<string> {
  for (const file of MODEL_FILES) {
    const candidate = join(directory, file);
    const found = await stat(candidate).catch(() => undefined);
    if (found?.isFile() === true) return candidate;
  }
  throw new Error(`${where}: path '${directory}' holds no ${MODEL_FILES.join(" or ")}`);
}

async function checkFile(file: string, maxBytes: number, where: string): Promise<void> {
  const found = await stat(file).catch(() => undefined);
  if (found === undefined || !found.isFile()) throw new Error(`${where}: ${file} is missing`);
  if (found.size > maxBytes) throw new Error(`${where}: ${file} is larger than ${maxBytes} bytes`);
}

async function readJson(file: string, maxBytes: number, where: string): Promise<unknown> {
  await checkFile(file, maxBytes, where);
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
  tokenizerConfig: Record<string, unknown>,
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
  const fromTokenizer = tokenizerConfig.model_max_length;
  if (typeof fromTokenizer === "number" && Number.isInteger(fromTokenizer) && fromTokenizer >= 2) {
    if (fromTokenizer <= MAX_MAX_TOKENS) return fromTokenizer;
  }
  return DEFAULT_MAX_TOKENS;
}

function softmax(values: Float32Array): number[] {
  const max = Math.max(...values);
  const exps = Array.from(values, (value) => Math.exp(value - max));
  const sum = exps.reduce((total, value) => total + value, 0);
  return exps.map((value) => value / sum);
}
