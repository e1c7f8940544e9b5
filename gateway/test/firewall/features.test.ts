import { describe, expect, test } from "vitest";
import { blockWeightSums, extractFeatures } from "../../src/firewall/features.ts";

function cueCount(text: string): number {
  return extractFeatures(text, 17).cueCount;
}

describe("cue events", () => {
  test("a task verb or question word counts only where a sentence or line starts", () => {
    expect(cueCount("Write a poem about the sea")).toBe(1);
    expect(cueCount("Revenue grew. Describe the lifecycle of a butterfly")).toBe(1);
    expect(cueCount("| 2007 | 4.8% |\nHow do solar panels work")).toBe(1);
    expect(cueCount("- Provide a summary")).toBe(1);
    expect(cueCount("We write code and describe it")).toBe(0);
    expect(cueCount("tell me how it works")).toBe(0);
  });

  test("'your' followed by answer/solution/response counts", () => {
    expect(cueCount("the snippet fits into your solution")).toBe(1);
    expect(cueCount("the answer is in the appendix")).toBe(0);
  });

  test("the count restarts with every text", () => {
    expect(cueCount("Write it. Explain it. Your answer")).toBe(3);
    expect(cueCount("plain data 42")).toBe(0);
  });
});

describe("longest base64 run", () => {
  const weights = new Int8Array(1 << 12);
  const longestRun = (text: string) => blockWeightSums(text, 12, weights).longestBase64Run;
  /** The definition: the longest run of A-Z a-z 0-9 + /. */
  const expected = (text: string) =>
    Math.max(0, ...[...text.matchAll(/[A-Za-z0-9+/]+/g)].map((match) => match[0].length));

  test("is the longest run of base64-alphabet characters, wherever it lies", () => {
    for (const text of [
      "",
      "aGVsbG8gd29ybGQ=",
      "short, then SGVsbG8sIFdvcmxkIQ+/9 and more",
      "ends with a run: QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo",
      "a  b\tc\u00e9d--e",
      "x".repeat(300),
    ]) {
      expect(longestRun(text), text).toBe(expected(text));
    }
  });

  test("agrees with the definition on random texts", () => {
    let seed = 99;
    const next = (below: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % below;
    };
    const alphabet = "aZ09+/= \n-.é\u200b";
    for (let i = 0; i < 500; i++) {
      let text = "";
      for (let length = next(400); length > 0; length--) text += alphabet[next(alphabet.length)];
      expect(longestRun(text), JSON.stringify(text)).toBe(expected(text));
    }
  });
});
