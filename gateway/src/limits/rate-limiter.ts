import { principalKey } from "../identity/principal-key.ts";
import { type KvStore, KvUnavailableError } from "../kv/kv-store.ts";
import { estimate, msUntilRoom, slidingWindowStep } from "./sliding-window.ts";

export interface RateLimitSettings {
  /** Requests per user per window (the YAML's requests_per_minute). */
  limit: number;
  windowSeconds: number;
  /** Counts apart from the global quota (an organization's per-server limit: `server/<name>`). */
  scope?: string;
}

export type RateLimitResult =
  | { outcome: "admitted"; remaining: number; resetSeconds: number }
  | { outcome: "refused"; remaining: 0; retryAfterSeconds: number; resetSeconds: number }
  /** The store is unreachable: the request goes through (fail open) and the caller counts it. */
  | { outcome: "unchecked"; reason: string };

const POLICY_NAME = "per-user";

/**
 * Per-user limits keyed by identity provider + subject, shared by every gateway process through the KV store.
 * Subjects are hashed into the key: Redis never holds user identifiers.
 */
export class RateLimiter {
  readonly #store: KvStore;
  readonly #now: () => number;

  constructor(store: KvStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * `user`: the caller (the principal itself, not a copy: its hashed key is cached per principal object).
   * `cost`: how many units this request spends (one per JSON-RPC message it carries).
   */
  async check(
    user: { idp: string; sub: string },
    settings: RateLimitSettings,
    cost = 1,
  ): Promise<RateLimitResult> {
    const windowMs = settings.windowSeconds * 1000;
    const now = this.#now();
    const windowIndex = Math.floor(now / windowMs);
    const elapsed = now - windowIndex * windowMs;
    const userKey = principalKey(user);
    const scope = settings.scope === undefined ? "" : `${settings.scope}:`;
    const key = (index: number) => `svc:rl:{${userKey}}:${scope}${settings.windowSeconds}:${index}`;
    let step: number[];
    try {
      step = await this.#store.eval(
        slidingWindowStep,
        [key(windowIndex), key(windowIndex - 1)],
        [String(settings.limit), String(windowMs), String(elapsed), String(cost)],
      );
    } catch (error) {
      if (error instanceof KvUnavailableError) return { outcome: "unchecked", reason: error.message };
      throw error;
    }
    const [admitted, current = 0, previous = 0] = step;
    const resetSeconds = Math.ceil((windowMs - elapsed) / 1000);
    if (admitted === 1) {
      const remaining = Math.max(
        0,
        Math.floor(settings.limit - estimate(current, previous, windowMs, elapsed)),
      );
      return { outcome: "admitted", remaining, resetSeconds };
    }
    const retryAfterSeconds = Math.max(
      1,
      Math.ceil(msUntilRoom(settings.limit, current, previous, windowMs, elapsed) / 1000),
    );
    return { outcome: "refused", remaining: 0, retryAfterSeconds, resetSeconds };
  }
}

/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers): the policy (quota q per window w seconds)
 * and the state (r remaining, t seconds until the quota resets), plus Retry-After on a refusal.
 */
export function rateLimitHeaders(
  settings: RateLimitSettings,
  result: RateLimitResult,
): Record<string, string> {
  if (result.outcome === "unchecked") return {};
  const headers: Record<string, string> = {
    "ratelimit-policy": `"${POLICY_NAME}";q=${settings.limit};w=${settings.windowSeconds}`,
    ratelimit: `"${POLICY_NAME}";r=${result.remaining};t=${result.resetSeconds}`,
  };
  if (result.outcome === "refused") headers["retry-after"] = String(result.retryAfterSeconds);
  return headers;
}
