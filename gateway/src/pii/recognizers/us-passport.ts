import { patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// US passport numbers: nine digits (older books) or a letter and eight digits (next generation). Both
// shapes are common for other identifiers, so they count only next to a context word.
const NINE_DIGITS = /(?<![\w-])\d{9}(?![\w-]|[.,]\d)/g;
const NEXT_GENERATION = /(?<![\w-])[A-Z]\d{8}(?![\w-])/g;

export const usPassportRecognizer = patternRecognizer({
  entity: "US_PASSPORT",
  needsDigit: true,
  patterns: [
    { regex: NINE_DIGITS, score: 0.05 },
    { regex: NEXT_GENERATION, score: 0.1 },
  ],
  context: ["passport", "travel", "document", "visa"],
  negativeContext: NEAR_MISS_WORDS,
});
