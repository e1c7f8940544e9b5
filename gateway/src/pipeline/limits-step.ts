// Pipeline step 3 (and its after-parse half): per-user rate limit, DPoP proof replay, JSON-RPC request id replay.
// All three live in the KV store, so they hold across replicas; when the store is unreachable each check answers
// `unchecked`, the request goes through (a Redis outage must not become a full outage), a metric counts it and
// /health reports DEGRADED (the breaker is open). docs/access.md says exactly what is covered.
import type { JsonRpcId } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { ANONYMOUS_PRINCIPAL } from "../identity/authenticate.ts";
import type { DpopProof } from "../identity/dpop-proof.ts";
import type { Principal } from "../identity/principal.ts";
import { type RateLimiter, type RateLimitSettings, rateLimitHeaders } from "../limits/rate-limiter.ts";
import type { ReplayGuard } from "../limits/replay-guard.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import { sessionScope } from "../sessions/session-registry.ts";

export interface LimitDeps {
  rateLimiter: RateLimiter;
  replayGuard: ReplayGuard;
  metrics: GatewayMetrics;
}

/**
 * Counts the request against the caller's quota (`cost` units: one per JSON-RPC message). Resolves to the RateLimit
 * headers for the answer; rejects with `rate_limited` (429 + Retry-After) when the quota is spent. The anonymous
 * principal is not limited: in anonymous mode (local development) every caller is the same "user", so a per-user
 * quota would measure nothing.
 */
export async function checkRateLimit(
  deps: LimitDeps,
  settings: RateLimitSettings,
  principal: Principal,
  server: string,
  cost = 1,
): Promise<Record<string, string> | undefined> {
  if (principal === ANONYMOUS_PRINCIPAL) return undefined;
  const result = await deps.rateLimiter.check(principal, settings, cost);
  if (result.outcome === "unchecked") {
    deps.metrics.recordUnchecked("rate_limit");
    return undefined;
  }
  const headers = rateLimitHeaders(settings, result);
  if (result.outcome === "refused") {
    deps.metrics.recordRateLimited(server);
    throw new GatewayError(
      "rate_limited",
      `Rate limit exceeded: ${settings.limit} messages per ${settings.windowSeconds} s (each message of a batch counts); retry in ${result.retryAfterSeconds} s`,
      { server, headers },
    );
  }
  return headers;
}

/**
 * A DPoP proof (RFC 9449) that step 2 verified: its jti must be new. The proof itself (signature, htm, htu, iat, and
 * for a bound token the key and ath) was checked by authentication, which holds with replay protection off too.
 */
export async function checkDpopReplay(deps: LimitDeps, proof: DpopProof): Promise<void> {
  const verdict = await deps.replayGuard.dpopJti(proof);
  if (verdict === "unchecked") {
    deps.metrics.recordUnchecked("dpop");
    return;
  }
  if (verdict === "replay")
    throw new GatewayError("replayed", "This DPoP proof was already used (jti replay)");
}

/**
 * After authorization: every JSON-RPC request id in the body must be new within its MCP session (MCP forbids reuse),
 * as seen by the session's owner. Requests without Mcp-Session-Id (initialize, stateless upstreams) are not covered.
 */
export async function checkRequestIds(
  deps: LimitDeps,
  server: string,
  sessionId: string,
  owner: string,
  ids: readonly JsonRpcId[],
): Promise<void> {
  const scope = sessionScope(server, sessionId, owner);
  const verdicts = await Promise.all(
    ids
      .filter((id): id is string | number => id !== null)
      .map(async (id) => ({ id, verdict: await deps.replayGuard.requestId(scope, id) })),
  );
  for (const { id, verdict } of verdicts) {
    if (verdict === "unchecked") deps.metrics.recordUnchecked("replay");
    if (verdict === "replay") {
      throw new GatewayError(
        "replayed",
        `JSON-RPC request id ${JSON.stringify(id)} was already used in this session; MCP request ids must be unique per session`,
        { server },
      );
    }
  }
}
