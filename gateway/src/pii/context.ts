import type { Recognizer } from "./recognizer.ts";

// Context words, as Presidio's context-aware enhancer uses them: a recognizer's context word among the few
// words just before a candidate (or in the name of the JSON field holding the string) raises its score by a
// fixed boost, to at least a floor that clears the threshold. Beyond Presidio, a word that speaks against it
// (a near-miss word such as "order" or "version"; another recognizer's context word right before the span)
// lowers it by the same boost; the nearest telling word decides. Words are compared lower-cased, a plural "s"
// dropped.

export const CONTEXT_BOOST = 0.35;
export const MIN_SCORE_WITH_CONTEXT = 0.4;
export const CONTEXT_WORDS_BEFORE = 5;
/** How far back to look for those words: enough for five ordinary words, bounded whatever the text. */
const CONTEXT_WINDOW = 80;

const WORD = /[A-Za-z][A-Za-z-]*/g;

/** The lower-cased words of `text` ending at `start`, nearest last, at most CONTEXT_WORDS_BEFORE of them. */
export function wordsBefore(text: string, start: number): string[] {
  const window = text.slice(Math.max(0, start - CONTEXT_WINDOW), start);
  const words = window.match(WORD) ?? [];
  // The first word may be cut by the window: drop it unless the window reaches the start of the text.
  if (start > CONTEXT_WINDOW && words.length > 0 && /[A-Za-z]/.test(window.charAt(0))) words.shift();
  return words.slice(-CONTEXT_WORDS_BEFORE).map((word) => word.toLowerCase());
}

/** The words in a JSON field name: `phoneNumber`, `phone_number` and `PHONE-NUMBER` all give phone, number. */
export function wordsOfFieldName(name: string): string[] {
  return (name.replace(/([a-z])([A-Z])/g, "$1 $2").match(/[A-Za-z]+/g) ?? []).map((word) =>
    word.toLowerCase(),
  );
}

/** The words that raise and the words that lower one recognizer's scores, in the set of active recognizers. */
export interface ContextWords {
  raise: ReadonlySet<string>;
  /** Its near-miss words ("order", "version"). */
  lower: ReadonlySet<string>;
  /** The other active recognizers' context words it does not share: they lower only right before a span. */
  foreign: ReadonlySet<string>;
}

/**
 * A recognizer's context words raise its score and its near-miss words lower it. A context word of another
 * recognizer lowers it too, but only as the word right before the span (filler words aside): "passport U94361666" is a passport
 * number even when its digits pass the DEA check, "SSN 024-00-3320" is no phone number, yet in "wire to
 * IBAN ... before 6/22/1943" the date is still a date.
 */
export function contextWordsFor(recognizer: Recognizer, active: readonly Recognizer[]): ContextWords {
  const raise = new Set(recognizer.context);
  const foreign = new Set<string>();
  for (const other of active) {
    if (other === recognizer) continue;
    for (const word of other.context) if (!raise.has(word)) foreign.add(word);
  }
  return { raise, lower: new Set(recognizer.negativeContext), foreign };
}

function listed(word: string, words: ReadonlySet<string>): boolean {
  return words.has(word) || (word.length > 3 && word.endsWith("s") && words.has(word.slice(0, -1)));
}

// Words that stand between a label and its value without changing what it labels ("passport number X",
// "SSN is X"): skipped when finding the word right before a span.
const FILLER_WORDS = new Set([
  "number",
  "no",
  "nr",
  "num",
  "id",
  "code",
  "is",
  "was",
  "my",
  "your",
  "the",
  "a",
]);

/** +1 when the nearest telling word raises, -1 when it lowers, 0 when no word tells. */
function verdict(wordsNearestLast: readonly string[], context: ContextWords): number {
  let rightBefore = true;
  for (let i = wordsNearestLast.length - 1; i >= 0; i--) {
    const word = wordsNearestLast[i] as string;
    if (listed(word, context.raise)) return 1;
    if (listed(word, context.lower)) return -1;
    if (FILLER_WORDS.has(word)) continue;
    if (rightBefore && listed(word, context.foreign)) return -1;
    rightBefore = false;
  }
  return 0;
}

/**
 * The words around the candidates of one string, read once: every recognizer asks about the words before its spans,
 * and several propose spans at the same place ("4111 1111 1111 1111" is a card, a bank number and a phone candidate),
 * so the words before a position and those of the field name are split and lower-cased once per string, not once per
 * candidate and recognizer. Bounded: one entry per distinct candidate start.
 */
export class TextContext {
  readonly text: string;
  readonly #fieldName: string;
  #fieldWords: string[] | undefined;
  readonly #before = new Map<number, string[]>();

  constructor(text: string, fieldName: string) {
    this.text = text;
    this.#fieldName = fieldName;
  }

  get hasFieldName(): boolean {
    return this.#fieldName !== "";
  }

  wordsBefore(start: number): string[] {
    let words = this.#before.get(start);
    if (words === undefined) {
      words = wordsBefore(this.text, start);
      this.#before.set(start, words);
    }
    return words;
  }

  fieldWords(): string[] {
    this.#fieldWords ??= wordsOfFieldName(this.#fieldName);
    return this.#fieldWords;
  }
}

/** What the words before `start` (else the name of the field holding the text) say: +1, -1 or 0 (verdict above). */
export function contextVerdict(context: ContextWords, around: TextContext, start: number): number {
  const said = verdict(around.wordsBefore(start), context);
  if (said !== 0 || !around.hasFieldName) return said;
  return verdict(around.fieldWords(), context);
}

/**
 * The candidate's score after context. The nearest telling word decides ("server 10.0.0.1 runs release
 * 1.2.3.4": "release" speaks for the second number, not "server"); the JSON field name counts when the text
 * itself has no telling word. A raising word adds CONTEXT_BOOST (to at least MIN_SCORE_WITH_CONTEXT), a
 * lowering word takes it away.
 */
export function scoreWithContext(
  context: ContextWords,
  score: number,
  around: TextContext,
  start: number,
): number {
  const said = contextVerdict(context, around, start);
  if (said > 0) return Math.max(Math.min(1, score + CONTEXT_BOOST), MIN_SCORE_WITH_CONTEXT);
  if (said < 0) return Math.max(0, score - CONTEXT_BOOST);
  return score;
}
