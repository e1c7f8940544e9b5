import { nhsValid } from "../checksums.ts";
import { compact, patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// NHS numbers: ten digits, the last a modulus 11 check digit. One random ten-digit number in eleven passes the
// check, and a US phone number is printed 3-3-4 as well, so a valid NHS number printed 3-3-4 scores medium
// (not the certainty of a card's Luhn over a network prefix) and a context word settles it; ten bare digits
// (epoch seconds, IDs) need a context word.
const PRINTED = /(?<![\w-])\d{3}([ -])\d{3}\1\d{4}(?![\w-]|[.,]\d)/g;
const BARE = /(?<![\w-])\d{10}(?![\w-]|[.,]\d)/g;

export const ukNhsRecognizer = patternRecognizer({
  entity: "UK_NHS",
  needsDigit: true,
  patterns: [
    { regex: PRINTED, score: 0.5 },
    { regex: BARE, score: 0.3 },
  ],
  validate: (match) => (nhsValid(compact(match)) ? undefined : null),
  context: ["nhs", "health", "national", "service", "patient", "hospital", "gp"],
  // Money and phone words: a ten-digit account or phone number passes the check one time in eleven.
  negativeContext: [...NEAR_MISS_WORDS, "account", "acct", "bank", "routing", "phone", "tel", "call", "fax"],
});
