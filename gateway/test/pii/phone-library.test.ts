// The phone-number library as the scrubber loads it (phone-library.ts: each metadata pattern compiled once) answers
// exactly like the library as published: the ES module build, a separate module instance left as it ships.
import { type CountryCode, parsePhoneNumberFromString as publishedParse } from "libphonenumber-js/max";
import { describe, expect, test } from "vitest";
import { loadPhoneNumberLibrary } from "../../src/pii/phone-library.ts";
import { readLabelledTexts } from "./support/labelled-texts.ts";

const REGIONS: ReadonlyArray<CountryCode | undefined> = [
  undefined,
  "US",
  "GB",
  "DE",
  "FR",
  "IN",
  "AU",
  "BR",
  "CH",
];

/** Everything a recognizer or a caller reads from a parse. */
function answer(parse: typeof publishedParse, number: string, region: CountryCode | undefined) {
  const parsed = parse(number, { defaultCountry: region, extract: false });
  if (parsed === undefined) return undefined;
  return {
    number: parsed.number,
    country: parsed.country,
    valid: parsed.isValid(),
    possible: parsed.isPossible(),
    type: parsed.getType(),
  };
}

/** Digit runs written like phone numbers, as the recognizer's candidates are. */
function candidatesIn(text: string): string[] {
  return [...text.matchAll(/[+(]?\d[\d \-.()]{4,24}\d/g)].map((match) => match[0]);
}

/** Seeded random numbers in the shapes people write: with +, 00, a trunk 0, an area code in parentheses, groups. */
function randomNumbers(count: number): string[] {
  let seed = 12345;
  const next = (below: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % below;
  };
  const prefixes = ["+", "00", "0", "", "+1 ", "+44 ", "+49 ", "(0", "+33 ", "+91 "];
  const separators = [" ", "-", ".", ""];
  const numbers: string[] = [];
  for (let i = 0; i < count; i++) {
    let number = prefixes[next(prefixes.length)] as string;
    const digits = 6 + next(9);
    for (let d = 0; d < digits; d++) {
      number += String(next(10));
      if (number.startsWith("(0") && d === 2) number += ") ";
      else if (next(4) === 0) number += separators[next(separators.length)];
    }
    numbers.push(number.trim());
  }
  return numbers;
}

describe("phone-number library", () => {
  test("answers exactly as the published library on the labelled texts' numbers and random ones", () => {
    const parse = loadPhoneNumberLibrary();
    const texts = [
      ...readLabelledTexts("public-pii-train.jsonl"),
      ...readLabelledTexts("synthetic-dev.jsonl"),
      ...readLabelledTexts("synthetic-heldout.jsonl"),
    ].map((row) => row.text);
    const numbers = [...new Set([...texts.flatMap(candidatesIn), ...randomNumbers(3000)])];
    expect(numbers.length).toBeGreaterThan(3000);
    let valid = 0;
    for (const number of numbers) {
      for (const region of REGIONS) {
        const expected = answer(publishedParse, number, region);
        expect(answer(parse, number, region), `${number} in ${region}`).toEqual(expected);
        if (expected?.valid) valid++;
      }
    }
    // Both kinds of answer were compared, not only refusals.
    expect(valid).toBeGreaterThan(500);
  });
});
