// The built-in prompt-injection detector: normalise, name the wrapper rules that fire, score the text
// and any base64/hex-wrapped text inside it with the window classifier of the direction's head, and
// map the logit through the head's calibration (0.5 = the recommended operating point). Synchronous
// and in process; the model file is read once per process.

import { readFileSync } from "node:fs";
import { decodeWrappedRuns, SHORTEST_WRAPPED_RUN } from "./decode.ts";
import type { Detection, Detector, FirewallDirection } from "./detector.ts";
import { type BuiltinModel, parseModel } from "./model-file.ts";
import { normalizeText } from "./normalize.ts";
import { matchWrapperRules } from "./rules.ts";
import { maxWindowLogit, scoreWindows } from "./window-classifier.ts";

/** More wrapper rules than this add nothing: two named phrases already make the verdict. */
export const MAX_BOOSTED_RULES = 2;

const MODEL_FILE = new URL("./model/injection-classifier.json", import.meta.url);

/** The calibrated logit before the sigmoid; exported for training, which picks the threshold on it. */
export function rawLogit(
  model: BuiltinModel,
  text: string,
  direction: FirewallDirection,
): {
  logit: number;
  rules: string[];
} {
  const head = model.heads[direction];
  const normalized = normalizeText(text);
  const rules = matchWrapperRules(normalized);
  // Most texts hold no base64 run long enough to decode; the classifier's pass finds that out, which is far
  // cheaper than decodeWrappedRuns' regular expressions.
  const { logit: textLogit, longestBase64Run } = scoreWindows(head, normalized);
  let logit = textLogit;
  const wrapped = longestBase64Run >= SHORTEST_WRAPPED_RUN ? decodeWrappedRuns(normalized) : [];
  for (const decoded of wrapped) {
    const plain = normalizeText(decoded);
    logit = Math.max(logit, maxWindowLogit(head, plain));
    for (const rule of matchWrapperRules(plain)) if (!rules.includes(rule)) rules.push(rule);
  }
  return { logit: logit + head.ruleBoost * Math.min(rules.length, MAX_BOOSTED_RULES), rules };
}

export function createBuiltinDetector(model: BuiltinModel): Detector {
  return {
    name: "builtin",
    score(text: string, direction: FirewallDirection): Detection {
      const head = model.heads[direction];
      const { logit, rules } = rawLogit(model, text, direction);
      const score = 1 / (1 + Math.exp(-head.slope * (logit - head.threshold)));
      return rules.length > 0 ? { score, rules } : { score };
    },
  };
}

let cachedModel: BuiltinModel | undefined;

/** The shipped model, read and checked on first use and cached for the life of the process. */
export function loadBuiltinModel(): BuiltinModel {
  cachedModel ??= parseModel(readFileSync(MODEL_FILE, "utf8"));
  return cachedModel;
}

/** The `builtin` detector over the shipped model file. */
export function loadBuiltinDetector(): Detector {
  return createBuiltinDetector(loadBuiltinModel());
}
