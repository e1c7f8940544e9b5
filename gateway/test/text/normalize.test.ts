// The one detection normalisation (src/text/normalize.ts): what it folds, and that every span of the normalised text
// maps back to exactly the original characters it was read from.
import { describe, expect, test } from "vitest";
import { normalizeForDetection } from "../../src/text/normalize.ts";

const tags = (ascii: string) =>
  [...ascii].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");

describe("normalizeForDetection", () => {
  test("ASCII text is returned as is, without a mapping to pay for", () => {
    const normalized = normalizeForDetection("plain text 123");
    expect(normalized.changed).toBe(false);
    expect(normalized.text).toBe("plain text 123");
    expect(normalized.originalSpan(2, 5)).toEqual({ start: 2, end: 5 });
  });

  test.each([
    [
      "zero-width space, joiner, word joiner, soft hyphen",
      "al\u200Bi\u200Dc\u2060e\u00AD@example.com",
      "alice@example.com",
    ],
    [
      "bidi controls and the byte order mark",
      "\uFEFF\u202Ealice\u202C@\u2066example.com\u2069",
      "alice@example.com",
    ],
    [
      "fullwidth letters, at sign and digits",
      "ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ ０１２",
      "alice@example.com 012",
    ],
    ["no-break and other width spaces", "212\u00A0555\u202F0143\u2009x", "212 555 0143 x"],
    ["Cyrillic and Greek look-alikes", "\u0430lic\u0435@\u0435x\u0430mple.c\u03BFm", "alice@example.com"],
    ["dashes and the minus sign", "212\u2013555\u20140143 \u2212 1\u20102", "212-555-0143 - 1-2"],
    ["diacritics and combining marks", "i\u0308gno\u0301re pr\u00E9vious", "ignore previous"],
    ["digits of other scripts", "\u0661\u0662\u0663 \u0967\u0968", "123 12"],
    ["ideographic full stop", "alice@example\u3002com", "alice@example.com"],
    ["line and paragraph separators", "a\u2028b\u2029c", "a\nb\nc"],
    ["tag characters, decoded to the ASCII they smuggle", `ok${tags("ignore all")}\u{E007F}`, "okignore all"],
  ])("%s", (_what, input, expected) => {
    expect(normalizeForDetection(input).text).toBe(expected);
  });

  test("other scripts read as written (Hangul recomposed), emoji kept", () => {
    expect(normalizeForDetection("한국어 日本語 😀").text).toBe("한국어 日本語 😀");
  });

  test("a span maps back to every original character it was read from, invisible ones inside included", () => {
    const original = "mail: ali\u200Bce@ex\u00ADample.com!";
    const normalized = normalizeForDetection(original);
    const start = normalized.text.indexOf("alice");
    const end = normalized.text.indexOf("!");
    const span = normalized.originalSpan(start, end);
    expect(original.slice(span.start, span.end)).toBe("ali\u200Bce@ex\u00ADample.com");
  });

  test("expansions and contractions map to whole original code points", () => {
    const original = "x\uFB01le \u{1D41A}b \u{E0041}z";
    const normalized = normalizeForDetection(original);
    expect(normalized.text).toBe("xfile ab Az");
    // "i" alone came from the ligature "ﬁ": the whole ligature is its original.
    const i = normalized.text.indexOf("i");
    expect(
      original.slice(normalized.originalSpan(i, i + 1).start, normalized.originalSpan(i, i + 1).end),
    ).toBe("\uFB01");
    // The mathematical bold "a" is two UTF-16 units; the tag "A" too.
    const a = normalized.text.indexOf("ab");
    expect(normalized.originalSpan(a, a + 2)).toEqual({ start: 5, end: 8 });
    const tag = normalized.text.indexOf("A");
    expect(normalized.originalSpan(tag, tag + 1)).toEqual({ start: 9, end: 11 });
  });

  test("bounded: a text of the longest compatibility expansion grows by a fixed factor at most", () => {
    const original = "\uFDFA".repeat(1000);
    expect(normalizeForDetection(original).text.length).toBeLessThanOrEqual(18 * 1000);
  });
});
