import type { KvScript } from "../kv/kv-store.ts";

/**
 * A sliding-window counter: the count of the current fixed window plus the previous window's count weighted by how
 * much of it still overlaps the sliding window. Two integers per user instead of a log of timestamps, and at most
 * a small over-estimate at window edges (never an under-estimate of a steady rate).
 *
 * KEYS[1] current window counter, KEYS[2] previous window counter (same hash tag: one Redis Cluster slot).
 * ARGV[1] limit, ARGV[2] window ms, ARGV[3] ms elapsed in the current window, ARGV[4] cost (messages this request
 * carries: a batch spends one unit per message).
 * Returns {admitted (1/0), current count after the step, previous count}. A refused request is not counted.
 */
export const slidingWindowStep: KvScript<number[]> = {
  lua: `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local elapsed = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
local previous = tonumber(redis.call("GET", KEYS[2]) or "0")
if previous * (window - elapsed) / window + current + cost > limit then
  return {0, current, previous}
end
current = redis.call("INCRBY", KEYS[1], cost)
if current == cost then redis.call("PEXPIRE", KEYS[1], window * 2) end
return {1, current, previous}`,
  memory: (store, [currentKey, previousKey], [limitText, windowText, elapsedText, costText]) => {
    if (currentKey === undefined || previousKey === undefined)
      throw new Error("slidingWindowStep needs two keys");
    const limit = Number(limitText);
    const window = Number(windowText);
    const elapsed = Number(elapsedText);
    const cost = Number(costText ?? "1");
    const current = Number(store.get(currentKey) ?? "0");
    const previous = Number(store.get(previousKey) ?? "0");
    if ((previous * (window - elapsed)) / window + current + cost > limit) return [0, current, previous];
    store.set(
      currentKey,
      String(current + cost),
      current === 0 ? window * 2 : Math.max(store.pttl(currentKey), 1),
    );
    return [1, current + cost, previous];
  },
};

/** Estimated requests in the sliding window ending now. */
export function estimate(current: number, previous: number, windowMs: number, elapsedMs: number): number {
  return (previous * (windowMs - elapsedMs)) / windowMs + current;
}

/**
 * Milliseconds until one more request fits. If the current window alone is full, only the next window helps;
 * otherwise the previous window's weight shrinks linearly until the estimate leaves room.
 */
export function msUntilRoom(
  limit: number,
  current: number,
  previous: number,
  windowMs: number,
  elapsedMs: number,
): number {
  const untilNextWindow = windowMs - elapsedMs;
  if (current + 1 > limit) {
    // Next window: this window's count becomes the weighted previous one.
    const fractionNeeded = 1 - (limit - 1) / current; // weight must fall to (limit-1)/current
    return untilNextWindow + Math.ceil(Math.max(0, fractionNeeded) * windowMs);
  }
  if (previous === 0) return 0;
  const weightAllowed = (limit - 1 - current) / previous;
  const elapsedNeeded = windowMs * (1 - weightAllowed);
  return Math.max(0, Math.ceil(elapsedNeeded - elapsedMs));
}
