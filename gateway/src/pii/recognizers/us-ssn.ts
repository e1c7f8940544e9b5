import { allSameDigit, compact, patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// Social Security numbers: 3-2-4 digits with one kind of separator (medium), or nine bare digits (very weak:
// needs a context word). The Social Security Administration never issues area 000, 666 or 900-999 (those are
// ITINs), group 00 or serial 0000, and a few numbers are famous samples.
const SEPARATED = /(?<![\w-])\d{3}([- .])\d{2}\1\d{4}(?![\w-]|[.,]\d)/g;
const BARE = /(?<![\w-])\d{9}(?![\w-]|[.,]\d)/g;
const SAMPLE_NUMBERS = new Set(["123456789", "078051120", "219099999", "987654320"]);

function validate(match: string): number | null | undefined {
  const digits = compact(match);
  const area = digits.slice(0, 3);
  if (area === "000" || area === "666" || area.startsWith("9")) return null;
  if (digits.slice(3, 5) === "00" || digits.slice(5) === "0000") return null;
  if (allSameDigit(digits) || SAMPLE_NUMBERS.has(digits)) return null;
  return undefined;
}

export const usSsnRecognizer = patternRecognizer({
  entity: "US_SSN",
  needsDigit: true,
  patterns: [
    { regex: SEPARATED, score: 0.5 },
    { regex: BARE, score: 0.05 },
  ],
  validate,
  context: ["social", "security", "ssn", "ssns", "ss", "ssid"],
  negativeContext: NEAR_MISS_WORDS,
});
