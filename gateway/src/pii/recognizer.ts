import type { EntityType } from "../config/pii-entities.ts";

// A built-in recognizer, in Presidio's shape: patterns that propose spans with a base score, an optional
// validation (a checksum, a range check) that confirms or refuses each, and context words that raise the
// score when they stand near a span (context.ts). The built-in patterns are native RegExps written to stay
// linear: no nested unbounded quantifiers, every repetition bounded; operator patterns go through re2js instead.

/** A span a recognizer proposes, before context and threshold. Offsets are UTF-16 code units. */
export interface Candidate {
  start: number;
  end: number;
  score: number;
}

export interface Recognizer {
  readonly entity: EntityType;
  /** Words that raise the score when one of them stands just before the span (or names the JSON field). */
  readonly context: readonly string[];
  /** Words that lower it: near-misses such as order or version numbers announce themselves. */
  readonly negativeContext: readonly string[];
  /** True when every finding contains an ASCII digit: text without one is skipped at no cost. */
  readonly needsDigit: boolean;
  /** Proposes candidates through `emit`. */
  find(text: string, emit: (candidate: Candidate) => void, scan: ScanServices): void;
}

/** What the scan offers a recognizer that has a costly check (phone numbers: libphonenumber). */
export interface ScanServices {
  /**
   * What the words before `start` (or the field name) say about this recognizer: +1 a context word, -1 a
   * word against it, 0 neither. Lets a recognizer skip a costly check whose result only context could lift.
   */
  contextAt(start: number): number;
  /**
   * Accounts for one costly check; false when the value's budget (limits.ts `maxCostlyChecks`) is spent:
   * the recognizer stops, and the scan reports the bound instead of forwarding a half-checked string.
   */
  spendCostlyCheck(): boolean;
}

export interface PatternSpec {
  /** Must carry the `g` flag. */
  readonly regex: RegExp;
  readonly score: number;
  /**
   * A cheap test every match of `regex` implies (a literal the pattern cannot match without): a text failing it
   * skips `regex`, whose lookarounds would otherwise be tried at every position. A RegExp or a hand-written test.
   */
  readonly requires?: { test(text: string): boolean };
}

/**
 * What validation says about a match: a number is its new score, `null` refuses it, `undefined` keeps the
 * pattern's score (the check had nothing to say).
 */
export type Validation = number | null | undefined;

export interface PatternRecognizerSpec {
  entity: EntityType;
  patterns: readonly PatternSpec[];
  context: readonly string[];
  negativeContext?: readonly string[];
  needsDigit: boolean;
  validate?: (match: string) => Validation;
}

export function patternRecognizer(spec: PatternRecognizerSpec): Recognizer {
  for (const { regex } of spec.patterns) {
    if (!regex.global) throw new Error(`${spec.entity} pattern ${regex} needs the g flag`);
  }
  return {
    entity: spec.entity,
    context: spec.context,
    negativeContext: spec.negativeContext ?? [],
    needsDigit: spec.needsDigit,
    find(text, emit) {
      for (const { regex, score, requires } of spec.patterns) {
        if (requires !== undefined && !requires.test(text)) continue;
        regex.lastIndex = 0;
        for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
          const value = match[0];
          if (value === "") {
            regex.lastIndex++;
            continue;
          }
          const validated = spec.validate === undefined ? undefined : spec.validate(value);
          if (validated === null) continue;
          emit({ start: match.index, end: match.index + value.length, score: validated ?? score });
        }
      }
    },
  };
}

/** The characters of `value` that are ASCII letters or digits, upper-cased: separators dropped. */
export function compact(value: string): string {
  return value.replace(/[^0-9A-Za-z]/g, "").toUpperCase();
}

/** Whether every digit of `digits` is the same one (`000000000`, `1111111111`): a placeholder, not a number. */
export function allSameDigit(digits: string): boolean {
  return /^(\d)\1*$/.test(digits);
}
