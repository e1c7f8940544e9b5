// Every dimension that grows with the input is bounded, and no pattern (an operator's or a built-in one) can
// hold the event loop: the classic catastrophic-backtracking inputs finish with a bounded event-loop delay.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { describe, expect, test } from "vitest";
import { UNSCANNED_MARKER } from "../../src/pii/index.ts";
import { allRecognizers, compiled } from "./support/compile.ts";

/** The longest the event loop was blocked while `work` ran (in ms), from the histogram, not a stopwatch. */
async function longestBlock(work: () => void): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  await new Promise((resolve) => setImmediate(resolve));
  work();
  // Let the loop turn so the histogram samples the delay the work caused.
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  return histogram.max / 1e6;
}

describe("bounds", () => {
  test("a classic ReDoS pattern, (a+)+$, on 100 000 a's and a '!' runs in linear time", async () => {
    const scrubbing = compiled([{ enabled: true, custom_rules: [{ pattern: "(a+)+$", method: "mask" }] }]);
    const text = `${"a".repeat(100_000)}!`;
    let result: ReturnType<typeof scrubbing.scrubText> | undefined;
    const blocked = await longestBlock(() => {
      result = scrubbing.scrubText(text);
    });
    expect(result?.changed).toBe(false);
    // A backtracking engine takes longer than the age of the universe here; linear time takes tens of ms.
    expect(blocked).toBeLessThan(2_000);
  });

  test("built-in recognizers on adversarial text (long digit, '@', hex and dot runs) stay linear", async () => {
    const scrubbing = allRecognizers();
    const adversarial = [
      "1".repeat(200_000),
      "1 ".repeat(100_000),
      "a@".repeat(100_000),
      `${"a".repeat(200_000)}@`,
      "a:".repeat(100_000),
      "1.".repeat(100_000),
      `https://${"a".repeat(200_000)}`,
      "DE89 ".repeat(40_000),
      "0123 456 789, ".repeat(18_000), // phone-shaped, valid nowhere: the validation budget ends it
    ];
    const blocked = await longestBlock(() => {
      for (const text of adversarial) scrubbing.scrubText(text);
    });
    expect(blocked).toBeLessThan(5_000);
  });

  test("a string longer than maxStringLength is not scanned: it becomes [UNSCANNED] and the bound is named", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxStringLength: 100 } });
    const result = scrubbing.scrubValue({ short: "jane@example.org", long: `${"x".repeat(101)}` });
    expect(result.value).toEqual({ short: "<EMAIL_ADDRESS>", long: UNSCANNED_MARKER });
    expect(result.limitExceeded).toEqual({
      limit: "maxStringLength",
      message: "a string of 101 characters exceeds the scrubbing bound maxStringLength (100)",
    });
    expect(scrubbing.scrubText("y".repeat(101)).value).toBe(UNSCANNED_MARKER);
  });

  test("text past maxTextPerValue is not scanned", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxTextPerValue: 50 } });
    const result = scrubbing.scrubValue(["a".repeat(30), "b".repeat(30)]);
    expect(result.value).toEqual(["a".repeat(30), UNSCANNED_MARKER]);
    expect(result.limitExceeded?.limit).toBe("maxTextPerValue");
  });

  test("nesting deeper than maxDepth is cut off and named", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxDepth: 3 } });
    const result = scrubbing.scrubValue({ a: { b: { c: { d: "x" } } } });
    expect(result.value).toEqual({ a: { b: { c: UNSCANNED_MARKER } } });
    expect(result.limitExceeded?.limit).toBe("maxDepth");
    // JSON held in text counts one level more.
    expect(scrubbing.scrubValue({ a: { b: '{"c": 1}' } }).limitExceeded?.limit).toBe("maxDepth");
  });

  test("past maxNodes nothing more is walked", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxNodes: 4 } });
    const result = scrubbing.scrubValue(["a", "b", "c", "d", "e"]);
    expect(result.value).toEqual(["a", "b", "c", UNSCANNED_MARKER, UNSCANNED_MARKER]);
    expect(result.limitExceeded?.limit).toBe("maxNodes");
  });

  test("phone-number validations (libphonenumber parses) are budgeted per value: maxCostlyChecks", () => {
    const text = "call +44 20 7946 0958, +44 20 7946 0959 or +44 20 7946 0960"; // one parse each
    expect(compiled([{ enabled: true }], { limits: { maxCostlyChecks: 3 } }).scrubText(text).value).toBe(
      "call <PHONE_NUMBER>, <PHONE_NUMBER> or <PHONE_NUMBER>",
    );
    const result = compiled([{ enabled: true }], { limits: { maxCostlyChecks: 2 } }).scrubText(text);
    expect(result.value).toBe(UNSCANNED_MARKER);
    expect(result.limitExceeded?.limit).toBe("maxCostlyChecks");
  });

  test("past the first bound nothing more is read: later strings are [UNSCANNED] too", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxStringLength: 20 } });
    const result = scrubbing.scrubValue(["x".repeat(21), "jane@example.org", { mail: "bob@example.org" }]);
    expect(result.value).toEqual([UNSCANNED_MARKER, UNSCANNED_MARKER, UNSCANNED_MARKER]);
  });

  test("more findings than maxFindings in one value: the string that overflows is not forwarded", () => {
    const scrubbing = compiled([{ enabled: true }], { limits: { maxFindings: 3 } });
    const mails = Array.from({ length: 4 }, (_, i) => `u${i}@example.org`).join(" ");
    const result = scrubbing.scrubText(mails);
    expect(result.value).toBe(UNSCANNED_MARKER);
    expect(result.limitExceeded?.limit).toBe("maxFindings");
  });
});
