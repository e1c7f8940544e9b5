// A receiver's Retry-After header (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date. The queue waits at least
// this long before the next attempt, so a value that cannot be read is ignored (undefined) rather than guessed, and an
// absurd one is capped so a misbehaving receiver cannot park a sink for days.

/** The longest wait a receiver can ask for; beyond it the queue's own backoff takes over again. */
export const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;

/** Milliseconds to wait, from a Retry-After header value; undefined when absent or unreadable. */
export function retryAfterMs(
  header: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === "") return undefined;
  let ms: number;
  if (/^\d+$/.test(value)) {
    ms = Number(value) * 1000;
  } else {
    // HTTP-dates name the month ("Wed, 21 Oct 2015 07:28:00 GMT"); anything else Date.parse would guess at ("-5").
    const at = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(at)) return undefined;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}
