// How long a sink's queue waits before the next attempt: exponential backoff with full jitter (a random wait between
// 0 and min(cap, base * 2^attempt)), so gateways that lost the same receiver do not all come back at the same instant.
// A receiver's Retry-After is a floor, itself capped so a hostile or broken header cannot park a sink for hours.

export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  /** The longest Retry-After honoured. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 200, capMs: 30_000, maxRetryAfterMs: 300_000 };

/** `attempt`: failures in a row so far, 0 for the first retry. */
export function retryDelayMs(
  policy: BackoffPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  const jittered = Math.floor(random() * ceiling);
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return jittered;
  return Math.max(jittered, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}
