import { patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// Calendar dates: numeric (m/d/y, d/m/y, y-m-d with "/", "-" or "."), ISO 8601 timestamps, and dates with
// an English month name, weekday names. A year alone is not a finding (too common in text).
// With dots the year has four digits: "4.17.21" is a version far more often than a date.
const NUMERIC =
  /(?<![\w/.:@-])(?:\d{1,2}([/-])\d{1,2}\1(?:\d{4}|\d{2})|\d{1,2}\.\d{1,2}\.\d{4}|\d{4}([/.-])\d{1,2}\2\d{1,2})(?![\w/:-]|\.\d)/g;
const ISO_TIMESTAMP =
  /(?<![\w-])\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\w:])/g;
const MONTH =
  "(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)";
const ORDINAL = "(?:st|nd|rd|th)?";
const NAMED = new RegExp(
  `\\b(?:${MONTH}\\.? \\d{1,2}${ORDINAL}(?:,? \\d{4})?|\\d{1,2}${ORDINAL} (?:of )?${MONTH}\\.?,? \\d{4}|${MONTH} \\d{4})\\b`,
  "gi",
);
// Every pattern but WEEKDAY holds a digit: text without one (prose, a scrubbed result) skips them.
const DIGIT = /\d/;
const WEEKDAY = /\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b/gi;
// Every weekday ends in "day": finding that literal is several times cheaper than trying WEEKDAY's seven-way
// case-insensitive alternation at every word start, and most texts hold none.
const DAY = /day/i;

function validate(match: string): number | null | undefined {
  const parts = match.split(/[/.-]/);
  if (parts.length !== 3 || /[T ]/.test(match)) return undefined;
  const [first, second, third] = parts.map(Number) as [number, number, number];
  const isYearFirst = (parts[0] ?? "").length === 4;
  const [a, b] = isYearFirst ? [second, third] : [first, second];
  // Month and day in either order (m/d or d/m): one of them a month, both possible days.
  const plausible = (month: number, day: number) => month >= 1 && month <= 12 && day >= 1 && day <= 31;
  return plausible(a, b) || (!isYearFirst && plausible(b, a)) ? undefined : null;
}

export const dateTimeRecognizer = patternRecognizer({
  entity: "DATE_TIME",
  needsDigit: false,
  patterns: [
    { regex: NUMERIC, score: 0.6, requires: DIGIT },
    { regex: ISO_TIMESTAMP, score: 0.6, requires: DIGIT },
    { regex: NAMED, score: 0.6, requires: DIGIT },
    { regex: WEEKDAY, score: 0.4, requires: DAY },
  ],
  validate,
  context: [
    "date",
    "dated",
    "birthday",
    "born",
    "dob",
    "birth",
    "since",
    "until",
    "day",
    "expires",
    "expiry",
  ],
  negativeContext: NEAR_MISS_WORDS,
});
