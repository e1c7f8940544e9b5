// PLACEHOLDER until the classifier lands: the wrapper rules only.
import type { Detector } from "./detector.ts";
import { normalizeText } from "./normalize.ts";
import { matchWrapperRules } from "./rules.ts";

export function loadBuiltinDetector(): Detector {
  return {
    name: "builtin",
    score(text) {
      const rules = matchWrapperRules(normalizeText(text));
      return { score: rules.length > 0 ? 1 : 0, rules };
    },
  };
}
