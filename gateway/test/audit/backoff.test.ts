// The retry wait: full jitter under an exponential ceiling, capped; Retry-After as a floor, itself capped.
import { expect, test } from "vitest";
import { DEFAULT_BACKOFF, retryDelayMs } from "../../src/audit/backoff.ts";

const policy = { baseMs: 200, capMs: 30_000, maxRetryAfterMs: 300_000 };

test("the ceiling doubles per attempt up to the cap; the wait is anywhere below it", () => {
  expect(retryDelayMs(policy, 0, undefined, () => 0.999)).toBe(199);
  expect(retryDelayMs(policy, 3, undefined, () => 0.999)).toBe(1598);
  expect(retryDelayMs(policy, 20, undefined, () => 0.999)).toBe(29_970);
  expect(retryDelayMs(policy, 1000, undefined, () => 0.999)).toBe(29_970);
  expect(retryDelayMs(policy, 5, undefined, () => 0)).toBe(0);
});

test("Retry-After is a floor, never more than its cap; nonsense values are ignored", () => {
  expect(retryDelayMs(policy, 0, 5000, () => 0.5)).toBe(5000);
  expect(retryDelayMs(policy, 10, 1000, () => 0.5)).toBe(15_000);
  expect(retryDelayMs(policy, 0, 86_400_000, () => 0)).toBe(300_000);
  expect(retryDelayMs(policy, 0, Number.NaN, () => 0)).toBe(0);
  expect(retryDelayMs(policy, 0, -5, () => 0)).toBe(0);
  expect(DEFAULT_BACKOFF).toEqual(policy);
});
