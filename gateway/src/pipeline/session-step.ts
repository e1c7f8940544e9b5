// Pipeline step 3b: what one user may hold, and whose session a request acts in.
// - Per-user caps on requests in flight and GET streams (this process), so one user cannot take every upstream
//   connection the others need.
// - Session ownership (every replica, through the KV store): a session id the upstream issues is recorded as the
//   caller's before the client sees it; a request presenting a session id goes on only for its owner. Anyone else
//   gets 404, exactly the answer for an unknown session, and an audit event (the pipeline's step 9).
// The anonymous principal (SVC_ALLOW_ANONYMOUS, local development) is exempt from both: every anonymous caller is the
// same "user", so neither a per-user cap nor an owner would mean anything.
import type { ServerResponse } from "node:http";
import { GatewayError } from "../errors/gateway-error.ts";
import { ANONYMOUS_PRINCIPAL } from "../identity/authenticate.ts";
import type { Principal } from "../identity/principal.ts";
import type { UserLoad } from "../limits/user-load.ts";
import { onResponseClosed } from "../proxy/on-response-closed.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import type { SessionRegistry } from "../sessions/session-registry.ts";

export interface SessionStepDeps {
  sessions: SessionRegistry;
  userLoad: UserLoad;
  metrics: GatewayMetrics;
}

/** Takes a request or stream slot for the caller until the client's response closes; 429 at the cap. */
export function holdUserSlot(
  deps: SessionStepDeps,
  principal: Principal,
  owner: string,
  httpMethod: string,
  client: ServerResponse,
): void {
  if (principal === ANONYMOUS_PRINCIPAL) return;
  const kind = httpMethod === "GET" ? "stream" : "request";
  const release = deps.userLoad.acquire(owner, kind);
  if (release === undefined) {
    const { maxInFlight, maxStreams } = deps.userLoad.limits;
    throw new GatewayError(
      "user_capacity",
      kind === "stream"
        ? `Too many open notification streams for this user: at most ${maxStreams} at once (SVC_MAX_STREAMS_PER_USER); close one first`
        : `Too many requests in flight for this user: at most ${maxInFlight} at once (SVC_MAX_INFLIGHT_PER_USER); wait for one to finish`,
      { headers: { "retry-after": "1" } },
    );
  }
  onResponseClosed(client, release);
}

/** A presented Mcp-Session-Id must be the caller's: 404 otherwise, 503 when ownership cannot be checked. */
export async function checkSession(
  deps: SessionStepDeps,
  principal: Principal,
  owner: string,
  server: string,
  sessionId: string,
): Promise<void> {
  if (principal === ANONYMOUS_PRINCIPAL) return;
  const verdict = await deps.sessions.check(server, sessionId, owner);
  if (verdict === "owned") return;
  if (verdict === "unknown") {
    throw new GatewayError(
      "session_not_found",
      "Session not found: it expired, was ended, or was not opened by this user; send initialize to start a new one",
      { server },
    );
  }
  throw new GatewayError(
    "session_store_unavailable",
    "The session store is unreachable, so this session's owner cannot be checked; try again shortly",
    { server, headers: { "retry-after": "5" } },
  );
}

/** The upstream issued a session id: it becomes the caller's, unless the caller is at the cap (429). */
export async function admitSession(
  deps: SessionStepDeps,
  principal: Principal,
  owner: string,
  server: string,
  sessionId: string,
): Promise<void> {
  if (principal === ANONYMOUS_PRINCIPAL) return;
  const verdict = await deps.sessions.bind(server, sessionId, owner);
  if (verdict === "unchecked") {
    // Recorded on this replica only (see SessionRegistry.bind): a store outage must not stop every new session.
    deps.metrics.recordUnchecked("session");
  } else if (verdict === "at_cap") {
    const { maxPerOwner, idleTtlMs } = deps.sessions.limits;
    throw new GatewayError(
      "user_capacity",
      `Too many open sessions for this user on server '${server}': at most ${maxPerOwner} (SVC_MAX_SESSIONS_PER_USER); end one with DELETE, or wait until one has been idle for ${idleTtlMs / 1000} s`,
      { server },
    );
  }
}

/** A session ends when its DELETE succeeds or the upstream no longer knows it (404): its place is freed. */
export async function endSession(
  deps: SessionStepDeps,
  principal: Principal,
  owner: string,
  server: string,
  sessionId: string,
  httpMethod: string,
  status: number,
): Promise<void> {
  if (principal === ANONYMOUS_PRINCIPAL) return;
  if ((httpMethod === "DELETE" && status >= 200 && status < 300) || status === 404) {
    await deps.sessions.end(server, sessionId, owner);
  }
}
