import { expect, test } from "vitest";

test("workspace runs", () => {
  expect(1 + 1).toBe(2);
});
