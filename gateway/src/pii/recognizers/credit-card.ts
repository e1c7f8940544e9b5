import { luhnValid } from "../checksums.ts";
import { allSameDigit, compact, patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// 12 to 19 digits, bare or in the printed groupings (4-4-4-4[-3], Amex 4-6-5, Diners 4-6-4), each gap a space, a
// hyphen or a dot (people mix them: "4111 1111-1111.1111"), not part of a longer run of digit groups or of a word.
// Only Luhn-valid numbers in a card network's issuer range and length are findings, so the pattern itself stays loose.
const GAP = "[ .-]";
const GROUPED = String.raw`\d{4}${GAP}\d{4}${GAP}\d{4}${GAP}\d{1,7}|\d{4}${GAP}\d{6}${GAP}\d{4,5}`;
const CARD = new RegExp(
  String.raw`(?<![A-Za-z0-9_]|\d${GAP})(?:\d{12,19}|${GROUPED})(?![A-Za-z0-9_]|${GAP}\d)`,
  "g",
);

// Issuer ranges and the lengths each network issues (ISO/IEC 7812 IINs as the networks publish them).
const NETWORKS: readonly { prefix: RegExp; lengths: readonly number[] }[] = [
  { prefix: /^4/, lengths: [13, 16, 19] }, // Visa
  { prefix: /^(?:5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] }, // Mastercard
  { prefix: /^3[47]/, lengths: [15] }, // American Express
  { prefix: /^3(?:0[0-5]|095|[689])/, lengths: [14, 16] }, // Diners Club
  { prefix: /^35/, lengths: [16, 17, 18, 19] }, // JCB
  { prefix: /^(?:1800|2131)/, lengths: [15] }, // JCB, early ranges
  { prefix: /^(?:6011|64[4-9]|65)/, lengths: [16, 17, 18, 19] }, // Discover
  { prefix: /^62/, lengths: [16, 17, 18, 19] }, // UnionPay
  { prefix: /^1/, lengths: [15] }, // UATP
];
// Maestro spans 50 and 56-69 at 12-19 digits: wide enough that a Luhn-valid account or order number lands in
// it by chance, so it scores medium and a near-miss word ("account", "order") drops it.
const MAESTRO = /^(?:50|5[6-9]|6)/;

function validate(match: string): number | null {
  const digits = compact(match);
  if (allSameDigit(digits) || !luhnValid(digits)) return null;
  if (NETWORKS.some(({ prefix, lengths }) => prefix.test(digits) && lengths.includes(digits.length)))
    return 1;
  return MAESTRO.test(digits) ? 0.6 : null;
}

export const creditCardRecognizer = patternRecognizer({
  entity: "CREDIT_CARD",
  needsDigit: true,
  patterns: [{ regex: CARD, score: 0.3 }],
  validate,
  context: [
    "credit",
    "card",
    "visa",
    "mastercard",
    "cc",
    "amex",
    "discover",
    "jcb",
    "diners",
    "maestro",
    "instapayment",
    "payment",
  ],
  negativeContext: [...NEAR_MISS_WORDS, "account", "acct", "iban", "routing"],
});
