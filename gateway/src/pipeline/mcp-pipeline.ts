// The gateway's request path for `/{server}/mcp`, written once and in order. Each step says why it sits
// where it does; cheap refusals come first so that an attacker's junk costs as little as possible, and
// nothing reads the body before the caller is known to be allowed to send one.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuditLog } from "../audit/audit-log.ts";
import { checkAccessRules } from "../control-plane/organization-access.ts";
import { errorResponseParts } from "../errors/error-response.ts";
import { asGatewayError, GatewayError } from "../errors/gateway-error.ts";
import {
  type Authenticated,
  type AuthRequest,
  authenticate,
  rejectionReasonOf,
  requireLiveGrant,
  requireResource,
  requireServerProvider,
} from "../identity/authenticate.ts";
import type { GroupSync } from "../identity/group-sync/group-sync.ts";
import type { Principal } from "../identity/principal.ts";
import { principalKey } from "../identity/principal-key.ts";
import { type InspectionListeners, requestInspectors, responseInspectors } from "../inspect/chain.ts";
import { inspectRequest, responseInspection } from "../inspect/inspector.ts";
import { newRequestRecord, type RequestRecord } from "../inspect/request-record.ts";
import { RetryLinks } from "../inspect/retry-links.ts";
import type { UserLoad } from "../limits/user-load.ts";
import { type LogFields, type Logger, requestContext } from "../log/logger.ts";
import type { OAuthServer } from "../oauth/oauth-server.ts";
import { corsResponseHeaders, preflightAnswer } from "../proxy/cors.ts";
import { forward, UpstreamAuthRejected } from "../proxy/forward.ts";
import type { OpenStreams } from "../proxy/open-streams.ts";
import { checkOrigin, type OriginPolicy } from "../proxy/origin-guard.ts";
import type { ProxyAnswer } from "../proxy/proxy-answer.ts";
import type { UpstreamPools } from "../proxy/upstream-pools.ts";
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import { type GatewayMetrics, methodLabel } from "../runtime/metrics.ts";
import type { SessionRegistry } from "../sessions/session-registry.ts";
import type { RequestSpan, RequestTracer } from "../telemetry/otel-traces.ts";
import { parseBearerChallenge } from "../upstream-oauth/challenge.ts";
import type { UpstreamCaller, UpstreamOAuth } from "../upstream-oauth/upstream-oauth.ts";
import {
  type AffinityDeps,
  chooseInstance,
  type InstanceChoice,
  nextInstance,
  onlyInstance,
  pinIssuedSession,
  sessionGone,
} from "./affinity-step.ts";
import { recordAudit, recordFirewallFinding, recordScrubbed, recordWithheld } from "./audit-step.ts";
import { authorizeMessages, authorizeServer, type DecisionListener } from "./authorize-step.ts";
import { checkDpopReplay, checkRateLimit, checkRequestIds, type LimitDeps } from "./limits-step.ts";
import { type ParsedRequest, parseRequest } from "./parse-request.ts";
import { readBody } from "./read-body.ts";
import { requestIdFrom } from "./request-id.ts";
import { resolveRoute } from "./route.ts";
import { admitSession, checkSession, endSession, holdUserSlot } from "./session-step.ts";

export interface McpPipelineDeps extends LimitDeps {
  /** The config in force when the request arrives (undefined while starting); the request keeps it to the end. */
  currentConfig: () => ConfigSnapshot | undefined;
  pools: UpstreamPools;
  metrics: GatewayMetrics;
  streams: OpenStreams;
  logger: Logger;
  originPolicy: OriginPolicy;
  maxBodyBytes: number;
  upstreamTimeoutMs: number;
  /** Bounds on what an upstream may send (SVC_MAX_UPSTREAM_RESPONSE_BYTES, SVC_MAX_SSE_EVENT_BYTES), for forward. */
  maxUpstreamResponseBytes: number;
  maxSseEventBytes: number;
  /** SVC_PUBLIC_URL's origin; undefined = the request's Host header names the gateway. */
  publicUrl: string | undefined;
  /** Client request headers upstreams receive (SVC_FORWARD_REQUEST_HEADERS extends the built-in list). */
  forwardRequestHeaders: ReadonlySet<string>;
  /** Tool annotations per server, learnt from tools/list results (capability RBAC defaults need them). */
  toolHints: ToolHintsCache;
  /** This process's audit trail (step 9). */
  audit: AuditLog;
  /** Who owns which MCP session (shared through the KV store). */
  sessions: SessionRegistry;
  /** Requests and streams each user holds open on this process. */
  userLoad: UserLoad;
  /** JSON-RPC messages one POST may carry. */
  maxBatchMessages: number;
  /**
   * The request tracer while an OTLP exporter has export_traces on (it follows config reloads); absent or
   * undefined = no tracing, and then a request pays one call and a few undefined checks for it.
   */
  requestTracer?: () => RequestTracer | undefined;
  /** The gateway's own authorization server, when oauth_server is configured (built once the config is loaded). */
  oauthServer?: () => OAuthServer | undefined;
  /** Session affinity across upstream instances (absent: every server is one origin). */
  affinity?: AffinityDeps;
  /** Groups from the providers' management APIs (absent: only the token's groups count). */
  groupSync?: GroupSync;
  /** The gateway as OAuth client of upstreams with upstream_auth_type oauth (absent: such servers fail closed). */
  upstreamOAuth?: UpstreamOAuth;
}

const ALLOWED_METHODS = "GET, POST, DELETE";

/** One request to /{server}/mcp, on node:http's own objects; `server` is the path's server name. */
export interface McpExchange {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  server: string;
}

export function handleMcpRequest(c: McpExchange, deps: McpPipelineDeps): Promise<ProxyAnswer> {
  const requestId = requestIdFrom(c.incoming.headers["x-request-id"]);
  return requestContext.run({ requestId }, () => runPipeline(c, deps, requestId));
}

async function runPipeline(c: McpExchange, deps: McpPipelineDeps, requestId: string): Promise<ProxyAnswer> {
  const incoming = c.incoming;
  const record = newRequestRecord(requestId, incoming.method ?? "GET", incoming.socket.remoteAddress);
  const span = deps.requestTracer?.()?.startRequest(record.httpMethod, incoming.headers);
  const snapshot = deps.currentConfig();
  let response: ProxyAnswer;
  try {
    response = await proxyRequest(c, deps, record, snapshot, span);
  } catch (error) {
    const gatewayError = asGatewayError(error);
    record.failure = {
      code: gatewayError.code,
      message: gatewayError.message,
      authFailure: rejectionReasonOf(gatewayError),
    };
    if (gatewayError.code === "internal") deps.logger.error("request failed", { error: gatewayError.cause });
    response = errorResponseParts(gatewayError, record.errorContext);
  }
  // 9. audit: one event per decision, queued off the hot path; then metrics and the access log, all from the record.
  report(deps, record, snapshot, response.status);
  span?.end({
    requestId,
    server: record.server,
    method: methodLabel(record.method),
    status: response.status,
    provider: record.principal?.idp,
    errorCode: record.failure?.code,
  });
  return response;
}

/** Steps 0 to 8; whatever it throws is answered by runPipeline. */
async function proxyRequest(
  c: McpExchange,
  deps: McpPipelineDeps,
  record: RequestRecord,
  snapshot: ConfigSnapshot | undefined,
  /** The request's trace span when tracing is on: each step that passes adds an event. */
  span: RequestSpan | undefined,
): Promise<ProxyAnswer> {
  const incoming = c.incoming;
  const { httpMethod, errorContext } = record;
  // 0. guard: Origin/Host checks against DNS rebinding. First, because a browser tricked into calling us
  //    must not even learn which server names exist.
  const origin = incoming.headers.origin;
  const refusal = checkOrigin(deps.originPolicy, origin, incoming.headers.host);
  if (refusal !== undefined) throw refusal;
  if (origin !== undefined) {
    record.cors = corsResponseHeaders(origin);
    errorContext.cors = record.cors;
    if (httpMethod === "OPTIONS") return preflightAnswer(origin, record.requestId);
  }
  if (httpMethod !== "POST" && httpMethod !== "GET" && httpMethod !== "DELETE") {
    throw new GatewayError("method_not_allowed", `Method ${httpMethod} is not allowed on an MCP endpoint`, {
      headers: { allow: ALLOWED_METHODS },
    });
  }

  // 1. route: server name → upstream (404 unknown or disabled). Before auth: unknown paths cost nothing.
  if (snapshot === undefined)
    throw new GatewayError("not_ready", "The gateway is starting; try again shortly");
  const route = resolveRoute(snapshot, c.server);
  record.route = route;
  record.server = route.name;
  const server = route.name;
  span?.event("routed");

  // 2. authenticate: bearer JWT → principal (401 + WWW-Authenticate otherwise); a DPoP-bound token also needs
  //    its proof here, replay protection or not (docs/access.md). Before any body work, so unauthenticated
  //    traffic never makes the gateway read or parse. The Authorization header itself is dropped in forward
  //    (proxy/headers.ts): the client's token never goes upstream.
  const baseUrl = deps.publicUrl ?? `http://${incoming.headers.host ?? "localhost"}`;
  const dpop = incoming.headers.dpop;
  const authRequest: AuthRequest = {
    authorization: incoming.headers.authorization,
    dpop: typeof dpop === "string" ? dpop : undefined,
    method: httpMethod,
    rawUrl: incoming.url,
    baseUrl,
    server,
    verifyUnboundProof: snapshot.replayProtection,
  };
  const authenticated = await authenticate(snapshot.auth, authRequest);
  record.principal = authenticated.principal;
  // A server naming an `idp` admits only that provider's tokens (its groups are that provider's groups): 401.
  requireServerProvider(route.server.idp, authenticated, authRequest);
  // A token of the gateway's own authorization server names its resource: this server's, or the gateway's (401).
  const oauthServer = deps.oauthServer?.();
  requireResource(authenticated, authRequest, oauthServer?.issuer);
  // ...and, for a user's token, is refused once its grant is revoked (401).
  // (Without the gateway's own authorization server there is no grant to check, nor a promise to wait for.)
  if (oauthServer !== undefined) await requireLiveGrant(authenticated, authRequest, oauthServer.isGrantLive);
  // Groups from the provider's management API, when configured for the token's provider (after the provider check,
  // so a token this server refuses costs no lookup). A new object: the verifier caches the token's principal.
  const principal =
    deps.groupSync === undefined
      ? authenticated.principal
      : await withSyncedGroups(deps.groupSync, snapshot, authenticated);
  record.principal = principal;
  span?.event("authenticated");

  // 2b. authorize the server (RBAC, server level): needs only the principal, so it runs before any body work;
  //     a refused user cannot make the gateway read their body or spend their rate limit. 403 + JSON body.
  const policy = snapshot.loaded.config.gateway_policy;
  // rbac_audit: every decision on this server goes on the audit record (step 9).
  const onDecision: DecisionListener | undefined = route.server.rbac_audit
    ? (decision, about) => {
        record.decisions ??= [];
        record.decisions.push({ decision, capability: about });
      }
    : undefined;
  if (route.accessRules !== undefined) checkAccessRules(route.accessRules, principal.groups, route.name);
  authorizeServer(route.server, policy, principal, onDecision);
  span?.event("server_authorized");

  // 3. limit: per-user rate limit, then the replay check of the DPoP proof step 2 verified. Needs the principal
  //    from step 2; still before the body is read, so a flood costs one KV round trip per request and no parsing.
  if (snapshot.rateLimit !== undefined)
    setExtraHeaders(record, await checkRateLimit(deps, snapshot.rateLimit, principal, server));
  if (route.serverRateLimit !== undefined)
    setExtraHeaders(record, await checkRateLimit(deps, route.serverRateLimit, principal, server));
  if (snapshot.replayProtection && authenticated.proof !== undefined) {
    await checkDpopReplay(deps, authenticated.proof);
  }
  span?.event("limits_checked");

  // 3b. per-user caps on what is held open (requests in flight, GET streams) and session ownership: an
  //     Mcp-Session-Id is forwarded only for the principal the upstream issued it to (404 for anyone else, like an
  //     unknown session). Both need only the principal and headers, so they run before the body is read; ownership
  //     comes before anything that could act in, or spend the ids of, somebody else's session.
  const owner = principalKey(principal);
  record.owner = owner;
  holdUserSlot(deps, principal, owner, httpMethod, c.outgoing);
  const sessionId = incoming.headers["mcp-session-id"];
  const presentedSession = typeof sessionId === "string" ? sessionId : undefined;
  if (presentedSession !== undefined) {
    // Refused exactly as an MCP server answers an unknown session: a JSON-RPC error with id null (body unread).
    errorContext.rpcIds = [];
    await checkSession(deps, principal, owner, server, presentedSession);
    errorContext.rpcIds = undefined;
  }
  span?.event("session_checked");

  // 4. parse: read the body under the size limit, then JSON-RPC. From here on errors are JSON-RPC errors
  //    carrying the request ids, so an MCP client shows them as such.
  let parsed: ParsedRequest | undefined;
  let body: Buffer | undefined;
  if (httpMethod === "POST") {
    body = await readBody(incoming, deps.maxBodyBytes);
    errorContext.rpcIds = []; // JSON-RPC says: a parse error is answered with id null
    // The batch size is checked inside parseRequest, before any per-message work.
    parsed = parseRequest(body, deps.maxBatchMessages);
    record.method = parsed.method;
    record.messages = parsed.messages;
    record.retryOf = retryLinksOf(deps).firstRequestOf(owner, server, parsed.messages);
    record.batch = parsed.batch;
    errorContext.batch = parsed.batch;
    errorContext.rpcIds = parsed.requestIds;
    // Every message of a batch counts against the rate limit: step 3 spent one unit for the request.
    if (snapshot.rateLimit !== undefined && parsed.messages.length > 1) {
      const cost = parsed.messages.length - 1;
      setExtraHeaders(record, await checkRateLimit(deps, snapshot.rateLimit, principal, server, cost));
    }
    span?.event("parsed", { "svc.messages": parsed.messages.length });
  } else {
    errorContext.rpcIds = [];
  }

  // 5. authorize: capability RBAC on each parsed message (the server level ran at 2b). Needs both the principal
  //    (2) and the method names (4).
  if (parsed !== undefined) {
    record.capability = authorizeMessages(
      route.server,
      policy,
      principal,
      parsed,
      deps.toolHints,
      onDecision,
    );
    // Replay protection spends request ids only for messages that were admitted (step 3's after-parse half), in
    // the namespace of this session and its owner.
    if (snapshot.replayProtection && presentedSession !== undefined && parsed.requestIds.length > 0) {
      await checkRequestIds(deps, server, presentedSession, owner, parsed.requestIds);
    }
    span?.event("capabilities_authorized");
  }

  // 6. inspect request: each message through the request inspectors (inspect/chain.ts says which, in which order
  //    and why). Last before forwarding, so it only runs on requests that are allowed to go through. The client's
  //    bytes go upstream unchanged unless an inspector replaced a message.
  if (parsed !== undefined && body !== undefined) {
    const inspectors = requestInspectors(record, inspectionListeners(deps));
    if (inspectors.length > 0) {
      const inspected = await inspectRequest(inspectors, record, parsed.messages);
      if (inspected.changed) {
        record.messages = inspected.messages;
        body = Buffer.from(JSON.stringify(parsed.batch ? inspected.messages : inspected.messages[0]));
      }
      span?.event("request_inspected", { "svc.changed": inspected.changed });
    }
  }

  // 7. forward: upstream call through the keep-alive pool, with upstream auth (none / api_key / oauth).
  // 8. inspect response: the response inspectors run on the JSON answer parsed once, or per SSE event inside the
  //    relay, never buffering a stream.
  const listeners = inspectionListeners(deps);
  const inspection = responseInspection(
    responseInspectors(record, snapshot, deps.toolHints, listeners),
    record,
    { onWithheld: listeners.onWithheld, onPassed: listeners.onPassed },
  );
  // 6b. which upstream instance: a session's pinned one, or the next in turn (affinity-step.ts).
  const affinity = deps.affinity;
  let choice: InstanceChoice =
    affinity === undefined
      ? { route, pinned: false, pinIssued: false, others: [] }
      : (onlyInstance(affinity, route) ?? (await chooseInstance(affinity, route, presentedSession)));
  // 6c. upstream OAuth: this caller's upstream token (the user's own, or the server-wide machine token). Last before
  //     forwarding, so only a request that passed every policy can send a user to consent or spend a refresh.
  const oauthCaller: UpstreamCaller | undefined =
    route.authType === "oauth" ? { principal, owner, requestId: record.requestId } : undefined;
  const upstreamOAuth = oauthCaller === undefined ? undefined : requireUpstreamOAuth(deps, server);
  let upstreamAuth =
    oauthCaller === undefined
      ? undefined
      : await upstreamOAuth?.authorizationHeaders(route.server, oauthCaller);
  let authRejections = 0;
  const send = (choice: InstanceChoice) =>
    forward(
      {
        route: choice.route,
        method: httpMethod,
        incomingHeaders: incoming.headers,
        search: searchOf(incoming.url),
        body,
        requestId: record.requestId,
        pendingIds: parsed?.requestIds ?? [],
        timeoutMs: deps.upstreamTimeoutMs,
        client: c.outgoing,
        cors: record.cors,
        extraHeaders: record.extraHeaders,
        transformJson: inspection?.json,
        inspectSseEvent: inspection?.sse,
        unreadableAnswer: inspection?.unreadable,
        user: owner,
        admitSession: async (issued) => {
          await admitSession(deps, principal, owner, server, issued);
          if (affinity !== undefined) await pinIssuedSession(affinity, choice, issued);
        },
        traceHeaders: span?.upstreamHeaders(),
        auth: upstreamAuth,
      },
      deps,
    );
  let response: Awaited<ReturnType<typeof forward>>;
  for (;;) {
    try {
      response = await send(choice);
      break;
    } catch (error) {
      // The upstream refused the upstream token: one refresh and retry; after that (or for insufficient_scope) the
      // user is sent to consent by the error afterRejection throws.
      if (oauthCaller !== undefined && upstreamOAuth !== undefined && error instanceof UpstreamAuthRejected) {
        const challenge = await parseBearerChallenge(error.challenge);
        upstreamAuth = await upstreamOAuth.afterRejection(
          route.server,
          oauthCaller,
          error.upstreamStatus,
          challenge,
          authRejections > 0,
        );
        authRejections++;
        continue;
      }
      // A request outside a session whose instance refused the connection never reached it: the next one gets it.
      const next = nextInstance(choice, error);
      if (next !== undefined) {
        choice = next;
        continue;
      }
      const gone =
        affinity !== undefined && presentedSession !== undefined
          ? await sessionGone(affinity, choice, presentedSession, error)
          : undefined;
      throw gone ?? error;
    }
  }
  span?.event("upstream_answered", { "http.response.status_code": response.status });
  if (presentedSession !== undefined) {
    await endSession(deps, principal, owner, server, presentedSession, httpMethod, response.status);
  }
  return response;
}

function requireUpstreamOAuth(deps: McpPipelineDeps, server: string): UpstreamOAuth {
  if (deps.upstreamOAuth !== undefined) return deps.upstreamOAuth;
  throw new GatewayError(
    "upstream_oauth_failed",
    `Upstream server '${server}' uses upstream_auth_type oauth, which this gateway process was started without`,
    { server },
  );
}

/** Multi round-trip retry links (inspect/retry-links.ts), one set per deps object (per gateway). */
const retryLinksByDeps = new WeakMap<McpPipelineDeps, RetryLinks>();

function retryLinksOf(deps: McpPipelineDeps): RetryLinks {
  let links = retryLinksByDeps.get(deps);
  if (links === undefined) {
    links = new RetryLinks();
    retryLinksByDeps.set(deps, links);
  }
  return links;
}

/** The listeners of each deps object, built once: the request path asks for them twice per request. */
const listenersOf = new WeakMap<McpPipelineDeps, InspectionListeners>();

/** Where the inspectors' reports go: a metric, and an audit event naming entity types and counts, never values. */
function inspectionListeners(deps: McpPipelineDeps): InspectionListeners {
  let listeners = listenersOf.get(deps);
  if (listeners === undefined) {
    listeners = newInspectionListeners(deps);
    listenersOf.set(deps, listeners);
  }
  return listeners;
}

function newInspectionListeners(deps: McpPipelineDeps): InspectionListeners {
  const retryLinks = retryLinksOf(deps);
  return {
    onScrubbed: (record, direction, method, counts) => {
      deps.metrics.recordPiiReplacements(record.server, direction, counts);
      recordScrubbed(deps.audit, record, direction, method, counts);
    },
    onFirewallFinding: (record, finding) => {
      const action = finding.blocked
        ? "blocked"
        : finding.unavailable !== undefined
          ? "unavailable"
          : "monitored";
      deps.metrics.recordFirewallFinding(record.server, finding.direction, finding.detector, action);
      recordFirewallFinding(deps.audit, record, finding);
    },
    onPassed: (record, message) => {
      if (record.owner !== undefined)
        retryLinks.remember(record.owner, record.server, record.requestId, message);
    },
    onWithheld: (record, withheld) => {
      if (record.withheld === undefined) record.withheld = { count: 1, first: withheld };
      else record.withheld.count++;
      recordWithheld(deps.audit, record, withheld);
    },
  };
}

/** Headers every answer carries from now on (RateLimit), errors included. */
function setExtraHeaders(record: RequestRecord, headers: Record<string, string> | undefined): void {
  if (headers === undefined) return;
  record.extraHeaders = headers;
  record.errorContext.extraHeaders = headers;
}

/** Step 9 and the request's metrics and access-log line, all read from the record. */
function report(
  deps: McpPipelineDeps,
  record: RequestRecord,
  snapshot: ConfigSnapshot | undefined,
  status: number,
): void {
  const seconds = (performance.now() - record.started) / 1000;
  const latencyMs = Math.round(seconds * 1e6) / 1000;
  const label = methodLabel(record.method);
  const { principal, failure } = record;
  deps.metrics.recordRequest(record.server, label, status, seconds);
  recordAudit(deps.audit, {
    requestId: record.requestId,
    source: record.source,
    server: record.server,
    // The real method for the record (bounded: it is client input), the HTTP method when there is none.
    method: typeof record.method === "string" ? record.method.slice(0, 200) : record.httpMethod,
    principal,
    failure: failure?.code,
    failureMessage: failure?.message,
    authFailure: failure?.authFailure,
    decisions: record.decisions,
    capability: record.capability,
    withheld: record.withheld,
    retryOf: record.retryOf,
    status,
    latencyMs,
  });
  if (deps.logger.enabled("info")) {
    // Filled in place rather than spread from conditional objects: this runs once per request.
    const fields: LogFields = {
      http_method: record.httpMethod,
      server: record.server,
      method: label,
      status,
      duration_ms: latencyMs,
      config_generation: snapshot?.generation,
    };
    if (principal !== undefined) {
      fields.subject = principal.sub;
      fields.idp = principal.idp;
    }
    if (failure?.authFailure !== undefined) fields.auth_failure = failure.authFailure;
    deps.logger.info("request", fields);
  }
}

function searchOf(url: string | undefined): string {
  if (url === undefined) return "";
  const index = url.indexOf("?");
  return index === -1 ? "" : url.slice(index);
}

async function withSyncedGroups(
  groupSync: GroupSync,
  snapshot: ConfigSnapshot,
  { principal, token }: Authenticated,
): Promise<Principal> {
  if (snapshot.auth.kind !== "verify") return principal;
  const provider = snapshot.loaded.config.identity_providers.find((p) => p.name === principal.idp);
  if (provider === undefined) return principal;
  const groups = await groupSync.groupsFor(provider, principal, token);
  return groups === principal.groups ? principal : { ...principal, groups };
}
