import { patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// US bank account numbers have no structure beyond 8 to 17 digits, so the pattern alone is very weak: only a
// context word ("account", "bank", ...) lifts it over the threshold.
const ACCOUNT = /(?<![\w.-])\d{8,17}(?![\w-]|[.,]\d)/g;

export const usBankNumberRecognizer = patternRecognizer({
  entity: "US_BANK_NUMBER",
  needsDigit: true,
  patterns: [{ regex: ACCOUNT, score: 0.05 }],
  context: ["bank", "check", "checking", "account", "acct", "save", "savings", "debit", "routing"],
  negativeContext: NEAR_MISS_WORDS,
});
