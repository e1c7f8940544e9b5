import { createRequire } from "node:module";
import type { CountryCode, parsePhoneNumberFromString } from "libphonenumber-js/max";
import type { Recognizer, ScanServices } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// A cheap regex proposes digit runs written like phone numbers; libphonenumber-js (Google's libphonenumber
// metadata, the "max" set so validity means an assigned range, not just a plausible length) decides. How a
// number is written sets how sure we are: an international prefix is strong evidence, a trunk "0" or an area
// code in parentheses medium, bare digits in a non-NANP region are too often dates or IDs to count alone.

const CANDIDATE =
  /(?<![\w+\-.])(?:\+|\b00)?(?:\(\d{1,4}\)|\d)[\d \-.()]{4,24}\d(?:[ ]?(?:x|ext\.?|#)[ ]?\d{1,6})?(?![\w@]|-\w)/g;
const EXTENSION = /[ ]?(?:x|ext\.?|#)[ ]?\d{1,6}$/;
// North American Numbering Plan: area code and exchange start with 2-9; written 3-3-4 with separators or
// parentheses ("(415) 555-0132", "415.555.0132", "+1-415-555-0132").
const NANP_WRITTEN = /^(?:\+?1[ \-.]?)?(?:\([2-9]\d{2}\)[ ]?|[2-9]\d{2}([ \-.]))[2-9]\d{2}[ \-.]\d{4}$/;
/** Regions whose national formats are tried for numbers written without an international prefix. */
const NATIONAL_REGIONS: readonly CountryCode[] = [
  "US",
  "GB",
  "DE",
  "FR",
  "IT",
  "ES",
  "NL",
  "BE",
  "CH",
  "AT",
  "SE",
  "AU",
  "IN",
  "IL",
  "BR",
];
const MIN_DIGITS = 7;
/** E.164 allows 15 digits; a "00" international prefix adds two. */
const MAX_DIGITS = 17;

type ParsePhoneNumber = typeof parsePhoneNumberFromString;
let parsePhoneNumber: ParsePhoneNumber | undefined;

/**
 * libphonenumber-js with its "max" metadata, the largest library the scrubber uses: loaded (synchronously, it is
 * plain CommonJS) when a configuration turns this recognizer on (compile.ts), so a gateway that never scans for
 * phone numbers does not carry it in memory.
 */
export function loadPhoneNumberLibrary(): ParsePhoneNumber {
  parsePhoneNumber ??= (
    createRequire(import.meta.url)("libphonenumber-js/max") as typeof import("libphonenumber-js/max")
  ).parsePhoneNumberFromString;
  return parsePhoneNumber;
}

/** Thrown out of `score` when the costly-check budget is spent: ends this recognizer's scan of the text. */
const BUDGET_SPENT = Symbol("costly-check budget spent");

/** A dotted quad that is a valid IPv4 address: IP_ADDRESS's to find, and never worth a round of phone parses. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

type Parse = (number: string, defaultCountry?: CountryCode) => ReturnType<typeof parsePhoneNumberFromString>;

/** The candidate's score, or null when it is no phone number; throws BUDGET_SPENT past the budget. */
function score(candidate: string, scan: ScanServices, start: number, parse: Parse): number | null {
  const number = candidate.replace(EXTENSION, "");
  if (IPV4.test(number)) return null;
  const digits = number.replace(/\D/g, "");
  if (digits.length < MIN_DIGITS || digits.length > MAX_DIGITS) return null;
  if (number.startsWith("+") || number.startsWith("00")) {
    // "+41 (0)38 549 02 90": the bracketed trunk zero is dialled only nationally.
    const international = `+${number.replace(/^(\+|00)/, "").replace(/\(0\)/, "")}`;
    const parsed = parse(international);
    if (parsed === undefined) return null;
    if (parsed.isValid()) return 0.7;
    // A "+" says phone number even for an unassigned range; "00" also starts order and reference numbers.
    return number.startsWith("+") && parsed.isPossible() ? 0.5 : null;
  }
  if (NANP_WRITTEN.test(number)) return parse(number, "US")?.isValid() ? 0.6 : 0.4;
  if (/^[2-9]\d{9}$/.test(number)) {
    // Ten bare digits: a NANP number only if assigned, and then still only with a context word.
    return parse(number, "US")?.isValid() ? 0.3 : null;
  }
  const grouped = /[ \-.()]/.test(number);
  if (number.startsWith("0") || number.startsWith("(")) {
    // Grouped as people write phone numbers: medium; one bare run of digits: needs a context word.
    if (validInSomeRegion(number, parse)) return grouped ? 0.5 : 0.3;
    return null;
  }
  // A grouped local number without trunk prefix ("467 3395") is a phone number only when a context word
  // says so; without one the regions are not even tried (dates and counts look the same).
  if (grouped && scan.contextAt(start) > 0 && validInSomeRegion(number, parse)) return 0.1;
  return null;
}

function validInSomeRegion(number: string, parse: Parse): boolean {
  return NATIONAL_REGIONS.some((region) => parse(number, region)?.isValid());
}

/**
 * libphonenumber's parse, the costly check, remembered for one text: the same number written again (a result that
 * repeats its input, a table) costs nothing more. Each new parse spends one unit of the value's budget, which also
 * bounds what is remembered.
 */
function parserFor(scan: ScanServices): Parse {
  const seen = new Map<string, ReturnType<ParsePhoneNumber>>();
  const parsePhoneNumberFromString = loadPhoneNumberLibrary();
  return (number, defaultCountry) => {
    const key = `${defaultCountry ?? ""} ${number}`;
    if (seen.has(key)) return seen.get(key);
    if (!scan.spendCostlyCheck()) throw BUDGET_SPENT;
    const parsed = parsePhoneNumberFromString(number, { defaultCountry, extract: false });
    seen.set(key, parsed);
    return parsed;
  };
}

export const phoneNumberRecognizer: Recognizer = {
  entity: "PHONE_NUMBER",
  // Not "number": too general ("NHS number", "account number") to decide between recognizers.
  context: ["phone", "telephone", "tel", "cell", "cellphone", "mobile", "call", "fax", "contact", "whatsapp"],
  negativeContext: NEAR_MISS_WORDS,
  needsDigit: true,
  find(text, emit, scan) {
    CANDIDATE.lastIndex = 0;
    const parse = parserFor(scan);
    try {
      for (let match = CANDIDATE.exec(text); match !== null; match = CANDIDATE.exec(text)) {
        const candidate = match[0];
        const found = score(candidate, scan, match.index, parse);
        if (found !== null) emit({ start: match.index, end: match.index + candidate.length, score: found });
      }
    } catch (error) {
      if (error !== BUDGET_SPENT) throw error;
    }
  },
};
