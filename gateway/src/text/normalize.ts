// The one text normalisation the gateway's detectors read through: PII scrubbing finds personal data in it and the
// prompt-injection firewall scores it. A spelling a reader sees through must not hide a value or an instruction:
//
//   - compatibility forms (NFKD): fullwidth `＠` and digits, ligatures, circled and mathematical letters, no-break and
//     other width spaces all become their plain form;
//   - diacritics (nonspacing and enclosing marks) are dropped, so `ïgnörë` reads `ignore` and a combining mark cannot
//     split an address; the rest is recomposed (NFC), so Hangul and other scripts read as written;
//   - invisible format characters are removed: zero-width spaces and joiners, the soft hyphen, bidi controls, word
//     joiners, the byte order mark, variation selectors, Hangul fillers;
//   - Unicode tag characters (U+E0020-U+E007E, "ASCII smuggling") are decoded to the ASCII they stand for rather
//     than removed: a model reads them, so removing them would hide from the detectors exactly what the model sees;
//   - look-alike letters (Cyrillic and Greek homoglyphs of Latin letters) fold to the Latin letter, dashes and the
//     minus sign to `-`, ideographic full stops to `.`, line and paragraph separators to `\n`, and decimal digits of
//     any script to ASCII digits.
//
// The normalised text is for detection only: what a client or upstream receives is the original text, with findings
// replaced. So the result maps every span of the normalised text back to the original characters it came from
// (`originalSpan`), and a replacement covers exactly those, invisible characters inside included.
//
// Cost: a text without any non-ASCII character (most of them) is returned as is after one regular-expression test.
// Otherwise each non-ASCII code point is folded once per process (a bounded cache) and ASCII runs are copied whole.

/** A text as the detectors read it, and the way back to the original's offsets. */
export interface NormalizedText {
  /** The normalised text. */
  readonly text: string;
  /** False when `text` is the original (no offset mapping needed). */
  readonly changed: boolean;
  /**
   * The original span (UTF-16 offsets, end exclusive) holding the characters of `text.slice(start, end)`; for an
   * empty span, the original offset at that point.
   */
  originalSpan(start: number, end: number): { start: number; end: number };
}

const NON_ASCII = /[\u0080-\uFFFF]/;
const NON_ASCII_GLOBAL = /[\u0080-\uFFFF]/g;

/** Format characters (zero-width, soft hyphen, bidi controls, BOM, tags...) and marks that drop out. */
const FORMAT = /^\p{Cf}$/u;
const DROPPED_MARKS = /[\p{Mn}\p{Me}]/gu;
const DASH = /^[\p{Pd}\u2212\u2043\ufe63\uff0d]$/u;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
/** Hangul fillers render as nothing but are letters (Lo), not format characters. */
const INVISIBLE_LETTERS = new Set([0x115f, 0x1160, 0x3164, 0xffa0]);
const TAG_FIRST_PRINTABLE = 0xe0020;
const TAG_LAST_PRINTABLE = 0xe007e;

// Cyrillic and Greek letters that look like Latin ones; folded to the Latin letter they imitate.
const HOMOGLYPHS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    а: "a",
    в: "b",
    е: "e",
    к: "k",
    м: "m",
    н: "h",
    о: "o",
    р: "p",
    с: "c",
    т: "t",
    у: "y",
    х: "x",
    ѕ: "s",
    і: "i",
    ј: "j",
    һ: "h",
    ԁ: "d",
    ԛ: "q",
    ԝ: "w",
    ɡ: "g",
    А: "A",
    В: "B",
    Е: "E",
    К: "K",
    М: "M",
    Н: "H",
    О: "O",
    Р: "P",
    С: "C",
    Т: "T",
    Х: "X",
    І: "I",
    Ј: "J",
    Ѕ: "S",
    Ү: "Y",
    α: "a",
    ο: "o",
    ρ: "p",
    ν: "v",
    ι: "i",
    κ: "k",
    τ: "t",
    υ: "u",
    ϲ: "c",
    Α: "A",
    Β: "B",
    Ε: "E",
    Ζ: "Z",
    Η: "H",
    Ι: "I",
    Κ: "K",
    Μ: "M",
    Ν: "N",
    Ο: "O",
    Ρ: "P",
    Τ: "T",
    Υ: "Y",
    Χ: "X",
    Ϲ: "C",
  }),
);

/** Folded forms of the non-ASCII code points seen so far; bounded, since any text can bring new ones. */
const folded = new Map<number, string>();
const MAX_CACHED = 16_384;

/** The detection form of one non-ASCII code point: "" for one that drops out. */
function foldCodePoint(codePoint: number): string {
  let out = folded.get(codePoint);
  if (out !== undefined) return out;
  out = computeFold(codePoint);
  if (folded.size >= MAX_CACHED) folded.clear();
  folded.set(codePoint, out);
  return out;
}

function computeFold(codePoint: number): string {
  if (codePoint >= TAG_FIRST_PRINTABLE && codePoint <= TAG_LAST_PRINTABLE) {
    return String.fromCharCode(codePoint - 0xe0000);
  }
  const char = String.fromCodePoint(codePoint);
  if (FORMAT.test(char) || INVISIBLE_LETTERS.has(codePoint)) return "";
  if (codePoint === 0x2028 || codePoint === 0x2029) return "\n";
  if (codePoint === 0x3002 || codePoint === 0xff61) return ".";
  const decomposed = char.normalize("NFKD").replace(DROPPED_MARKS, "");
  let out = "";
  for (const part of decomposed) out += foldChar(part);
  return out.length > 1 ? out.normalize("NFC") : out;
}

/** One character of a decomposed code point: look-alikes, dashes and digits of other scripts. */
function foldChar(char: string): string {
  if (char.charCodeAt(0) < 0x80) return char;
  const latin = HOMOGLYPHS.get(char);
  if (latin !== undefined) return latin;
  if (DASH.test(char)) return "-";
  if (char === "\u3002") return ".";
  if (DECIMAL_DIGIT.test(char)) return String(digitValue(char.codePointAt(0) as number));
  if (FORMAT.test(char)) return "";
  return char;
}

/** The value of a decimal digit: Unicode lays out each script's digits as a run of ten, zero first. */
function digitValue(codePoint: number): number {
  let zero = codePoint;
  // Runs of ten sit back to back in some blocks (mathematical digits): walk to the first run, count modulo ten.
  while (zero > 0 && codePoint - zero < 100 && DECIMAL_DIGIT.test(String.fromCodePoint(zero - 1))) zero--;
  return (codePoint - zero) % 10;
}

/**
 * A stretch of the normalised text and where it came from: `linear` stretches map character for character
 * (unchanged text, one-for-one folds), the others map as a whole to the original code point that produced them.
 */
interface Segment {
  normalizedStart: number;
  originalStart: number;
  /** Length in the normalised text. */
  length: number;
  /** Length in the original (equal to `length` for a linear stretch). */
  originalLength: number;
  linear: boolean;
}

const UNCHANGED_SPAN = (start: number, end: number) => ({ start, end });

/** `text` as the detectors read it; see the top of this file. */
export function normalizeForDetection(text: string): NormalizedText {
  if (!NON_ASCII.test(text)) return { text, changed: false, originalSpan: UNCHANGED_SPAN };
  const segments: Segment[] = [];
  let out = "";
  /** Extends the last segment when it is linear and adjacent, else starts one. */
  const linear = (originalStart: number, piece: string): void => {
    const last = segments.at(-1);
    if (
      last?.linear === true &&
      last.originalStart + last.originalLength === originalStart &&
      last.normalizedStart + last.length === out.length
    ) {
      last.length += piece.length;
      last.originalLength += piece.length;
    } else {
      segments.push({
        normalizedStart: out.length,
        originalStart,
        length: piece.length,
        originalLength: piece.length,
        linear: true,
      });
    }
    out += piece;
  };
  let at = 0;
  NON_ASCII_GLOBAL.lastIndex = 0;
  for (let match = NON_ASCII_GLOBAL.exec(text); match !== null; match = NON_ASCII_GLOBAL.exec(text)) {
    const index = match.index;
    if (index < at) continue; // the low half of a surrogate pair already read
    if (index > at) linear(at, text.slice(at, index));
    const codePoint = text.codePointAt(index) as number;
    const width = codePoint > 0xffff ? 2 : 1;
    const fold = foldCodePoint(codePoint);
    if (fold.length === width && (width === 1 || fold === text.slice(index, index + 2))) linear(index, fold);
    else if (fold !== "") {
      segments.push({
        normalizedStart: out.length,
        originalStart: index,
        length: fold.length,
        originalLength: width,
        linear: false,
      });
      out += fold;
    }
    at = index + width;
    NON_ASCII_GLOBAL.lastIndex = at;
  }
  if (at < text.length) linear(at, text.slice(at));
  if (out === text) return { text, changed: false, originalSpan: UNCHANGED_SPAN };
  return {
    text: out,
    changed: true,
    originalSpan: (start, end) => mapSpan(segments, text.length, start, end),
  };
}

/** The segment holding normalised offset `offset` (the last one starting at or before it). */
function segmentAt(segments: readonly Segment[], offset: number): Segment | undefined {
  let low = 0;
  let high = segments.length - 1;
  let found: Segment | undefined;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const segment = segments[middle] as Segment;
    if (segment.normalizedStart <= offset) {
      found = segment;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

function mapSpan(
  segments: readonly Segment[],
  originalLength: number,
  start: number,
  end: number,
): { start: number; end: number } {
  const originalStartOf = (offset: number): number => {
    const segment = segmentAt(segments, offset);
    if (segment === undefined) return 0;
    const into = offset - segment.normalizedStart;
    if (into >= segment.length) return segment.originalStart + segment.originalLength;
    return segment.linear ? segment.originalStart + into : segment.originalStart;
  };
  if (end <= start) {
    const point = originalStartOf(start);
    return { start: point, end: point };
  }
  const last = segmentAt(segments, end - 1);
  let originalEnd = originalLength;
  if (last !== undefined) {
    const into = end - 1 - last.normalizedStart;
    originalEnd = last.linear ? last.originalStart + into + 1 : last.originalStart + last.originalLength;
  }
  return { start: originalStartOf(start), end: originalEnd };
}
