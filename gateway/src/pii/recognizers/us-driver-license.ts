import { patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// US driver's license numbers follow each state's format: one or two letters and 3-14 digits, 2 digits +
// 3 letters + 5-6 digits, digits and a trailing letter, ... (the union of the state formats Presidio lists).
// Weak alone (product codes look the same); a context word makes them findings.
// The formats, grouped by their first character: [A-Z]{1,2}\d{3,14}, [A-Z]\d[A-Z]\d[A-Z], [A-Z]{2}\d{6}[A-Z],
// [A-Z]\d{6}R, then \d{2}[A-Z]{3}\d{5,6}, \d{7,9}[A-Z]{1,2}, \d{3}[A-Z]{2}\d{4}. "Not after a word character" is
// checked once that first character has matched ((?<![\w-][A-Z]) after an [A-Z]): a pattern that starts with a
// character class lets V8 skip the positions (most of any text: lower-case letters) where no format can start,
// instead of trying the look-behind at every one; about 3x faster, the same matches.
const ALPHANUMERIC =
  /(?:[A-Z](?<![\w-][A-Z])(?:[A-Z]?\d{3,14}|\d[A-Z]\d[A-Z]|[A-Z]\d{6}[A-Z]|\d{6}R)|\d(?<![\w-]\d)(?:\d[A-Z]{3}\d{5,6}|\d{6,8}[A-Z]{1,2}|\d{2}[A-Z]{2}\d{4}))(?![\w-])/g;
const DIGITS = /(?<![\w.-])(?:\d{6,14}|\d{16})(?![\w-]|[.,]\d)/g;

export const usDriverLicenseRecognizer = patternRecognizer({
  entity: "US_DRIVER_LICENSE",
  needsDigit: true,
  patterns: [
    { regex: ALPHANUMERIC, score: 0.3 },
    { regex: DIGITS, score: 0.01 },
  ],
  context: [
    "driver",
    "drivers",
    "license",
    "licence",
    "permit",
    "lic",
    "dl",
    "dls",
    "cdl",
    "cdls",
    "driving",
  ],
  negativeContext: NEAR_MISS_WORDS,
});
