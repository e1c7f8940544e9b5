import { describe, expect, test } from "vitest";
import { extractFeatures } from "../../src/firewall/features.ts";

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
