// The text the injection detector scores: the gateway's one detection normalisation (text/normalize.ts), which PII
// scrubbing reads through too, so obfuscation that a reader model sees through (compatibility forms, invisible
// characters, look-alike letters, tag-character smuggling) hides an instruction from neither. The detector needs only
// the normalised text, not the way back to the original's offsets.
import { normalizeForDetection } from "../text/normalize.ts";

/** The detection form of `text` (text/normalize.ts says what it folds and why). */
export function normalizeText(text: string): string {
  return normalizeForDetection(text).text;
}
