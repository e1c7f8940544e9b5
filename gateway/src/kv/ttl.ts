/** Both stores take TTLs in whole milliseconds > 0; anything else is a caller bug, named as such. */
export function checkTtl(ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`KV store: ttlMs must be a positive integer number of milliseconds, got ${ttlMs}`);
  }
}
