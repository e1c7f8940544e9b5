import { expect, test } from "vitest";
import { MAX_RETRY_AFTER_MS, retryAfterMs } from "../../src/audit/exporters/retry-after.ts";

test("Retry-After reads delay-seconds and HTTP-dates, ignores what it cannot read, and caps the wait", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  expect(retryAfterMs("3", now)).toBe(3000);
  expect(retryAfterMs(["0"], now)).toBe(0);
  expect(retryAfterMs("Wed, 25 Nov 2026 12:00:30 GMT", now)).toBe(30_000);
  expect(retryAfterMs("Wed, 25 Nov 2026 11:00:00 GMT", now)).toBe(0);
  expect(retryAfterMs(undefined, now)).toBeUndefined();
  expect(retryAfterMs("soon", now)).toBeUndefined();
  expect(retryAfterMs("-5", now)).toBeUndefined();
  expect(retryAfterMs("86400", now)).toBe(MAX_RETRY_AFTER_MS);
});
