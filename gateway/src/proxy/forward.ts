// Pipeline step 7: one call to the upstream through its keep-alive pool (undici dispatch, see
// upstream-exchange.ts), and the translation of what comes
// back. JSON answers and 202s pass through byte for byte (no re-serialisation); SSE goes through the relay,
// which writes to the client's response itself; failures become GatewayErrors naming the server.
//
// The relay's invariant: with any response inspector on (the request carries transformJson / inspectSseEvent), no
// upstream byte reaches the client unless an inspector saw the message it belongs to, on every leg (POST JSON, POST
// SSE, the GET stream, resumption with Last-Event-ID, subscriptions/listen). A JSON answer is written in one place,
// the end of forward(): the inspected bytes, or the gateway's error when they cannot be read (not JSON by media
// type or by content: inspect/inspector.ts). A stream's events are written by the relay (sse-relay.ts) only after
// the inspection of their message has settled, and an inspection that cannot read one ends the stream with errors.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { apiKeyVariable } from "../config/server-env.ts";
import { type JsonRpcId, jsonRpcErrorObject } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Logger } from "../log/logger.ts";
import type { UpstreamRoute } from "../runtime/config-snapshot.ts";
import type { GatewayMetrics, UpstreamErrorKind } from "../runtime/metrics.ts";
import { downstreamResponseHeaders, isIdentityEncoding, upstreamRequestHeaders } from "./headers.ts";
import { onResponseClosed } from "./on-response-closed.ts";
import type { OpenStreams } from "./open-streams.ts";
import type { ProxyAnswer } from "./proxy-answer.ts";
import { relaySse, type SseEventInspector, type SseRelay } from "./sse-relay.ts";
import { AnswerTooLargeError, UpstreamExchange, type UpstreamHead } from "./upstream-exchange.ts";
import type { UpstreamPools } from "./upstream-pools.ts";

export interface ForwardRequest {
  route: UpstreamRoute;
  method: "GET" | "POST" | "DELETE";
  incomingHeaders: IncomingHttpHeaders;
  /** Query string of the client's request, including the `?`, or "". */
  search: string;
  body: Buffer | undefined;
  requestId: string;
  /** Ids of JSON-RPC requests in the body: the ones a dead stream must still answer. */
  pendingIds: readonly JsonRpcId[];
  timeoutMs: number;
  /**
   * The client's response: watched for the client going away before the upstream answers, and where an SSE
   * answer is written (the relay writes it directly; see streamResponse).
   */
  client: ServerResponse;
  /** CORS headers for an admitted browser origin, added to the answer. */
  cors?: Record<string, string>;
  /** Headers the gateway adds to a successful answer (e.g. RateLimit). */
  extraHeaders?: Record<string, string>;
  /**
   * Per-request response policy (the response inspectors): a JSON answer's bytes, each SSE event, and the error for an
   * answer they cannot read at all. Set when any response inspector applies: then no upstream byte reaches the client
   * unless an inspector saw the message it belongs to (see forward()).
   */
  transformJson?: (bytes: Buffer) => Buffer | Promise<Buffer>;
  inspectSseEvent?: SseEventInspector;
  unreadableAnswer?: (reason: string, detail: string) => GatewayError;
  /** The caller's principalKey: calls waiting for a connection to the upstream are served user by user. */
  user: string;
  /**
   * Called when the upstream issues a new Mcp-Session-Id, before the client can see it (session ownership). A
   * rejection refuses the answer: the upstream session is ended again and the client gets the error instead.
   */
  admitSession?: (sessionId: string) => Promise<void>;
  /**
   * W3C trace context naming the gateway's span (telemetry/otel-traces.ts) when tracing is on: it replaces the
   * client's traceparent/tracestate, so the upstream's spans hang under the gateway's.
   */
  traceHeaders?: Record<string, string>;
  /** Headers that authenticate this call to the upstream, in place of the route's (upstream OAuth: per caller). */
  auth?: Readonly<Record<string, string>>;
}

/**
 * The upstream refused the gateway's credentials (401, or 403). Carries the upstream's challenge (WWW-Authenticate),
 * which upstream OAuth reads to refresh, step up or send the user to consent; the client never sees it.
 */
export class UpstreamAuthRejected extends GatewayError {
  readonly upstreamStatus: number;
  readonly challenge: string | string[] | undefined;
  constructor(error: GatewayError, upstreamStatus: number, challenge: string | string[] | undefined) {
    super(error.code, error.message, { server: error.server });
    this.upstreamStatus = upstreamStatus;
    this.challenge = challenge;
  }
}

export interface ForwardDeps {
  pools: UpstreamPools;
  metrics: GatewayMetrics;
  streams: OpenStreams;
  logger: Logger;
  inspectSseEvent?: SseEventInspector;
  /** SVC_PUBLIC_URL's origin: the X-Forwarded-Proto and -Host the upstream gets; else the request's Host. */
  publicUrl: string | undefined;
  /** Client request headers the upstream may see (proxy/headers.ts, SVC_FORWARD_REQUEST_HEADERS). */
  forwardRequestHeaders: ReadonlySet<string>;
  /** SVC_MAX_UPSTREAM_RESPONSE_BYTES: the largest JSON answer the gateway reads. */
  maxUpstreamResponseBytes: number;
  /** SVC_MAX_SSE_EVENT_BYTES: the largest single SSE event (unfinished line included) the relay holds. */
  maxSseEventBytes: number;
}

const CONNECT_ERRORS = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

function upstreamFailure(route: UpstreamRoute, error: unknown, metrics: GatewayMetrics): GatewayError {
  const code = (error as { code?: unknown }).code;
  if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") {
    metrics.recordUpstreamError(route.name, "timeout");
    return new GatewayError("upstream_timeout", `Upstream server '${route.name}' did not answer in time`, {
      server: route.name,
      cause: error,
    });
  }
  if (typeof code === "string" && CONNECT_ERRORS.has(code)) {
    metrics.recordUpstreamError(route.name, "unreachable");
    return new GatewayError(
      "upstream_unreachable",
      `Upstream server '${route.name}' is unreachable (${code})`,
      {
        server: route.name,
        cause: error,
      },
    );
  }
  metrics.recordUpstreamError(route.name, "unreachable");
  const detail =
    typeof code === "string" ? code : error instanceof Error ? error.message : "connection failed";
  return new GatewayError("upstream_failed", `Upstream server '${route.name}' failed: ${detail}`, {
    server: route.name,
    cause: error,
  });
}

/** An answer over a size limit (JSON or one SSE event) is the upstream's fault: counted and logged for operators. */
function reportTooLarge(route: UpstreamRoute, error: GatewayError, deps: ForwardDeps): GatewayError {
  deps.metrics.recordUpstreamError(route.name, "too_large");
  deps.logger.warn("upstream answer too large", { server: route.name, error: error.message });
  return error;
}

function authRequiredMessage(route: UpstreamRoute): string {
  const base = `Upstream server '${route.name}' requires authorization (it answered HTTP 401)`;
  switch (route.authType) {
    case "oauth":
      return `${base}; it refused the upstream OAuth token`;
    case "api_key":
      return `${base}; it refused the API key from ${apiKeyVariable(route.name)}`;
    default:
      return `${base}; set upstream_auth_type for this server`;
  }
}

/**
 * Statuses that never reach the client as the upstream sent them. 401 and 403 concern the gateway's access to the
 * upstream, not the client's to the gateway: passed on, their challenge (WWW-Authenticate) would send the client's
 * OAuth flow wherever the upstream points. 5xx is the upstream failing. Every other status (400, 404 for an
 * expired session, 405, 429...) is part of the MCP transport and passes, with the allow-listed headers only.
 */
function isRejectedStatus(status: number): boolean {
  return status === 401 || status === 403 || status >= 500;
}

function rejectStatus(route: UpstreamRoute, status: number, metrics: GatewayMetrics): GatewayError {
  const kind: UpstreamErrorKind = status === 401 ? "auth_required" : status === 403 ? "forbidden" : "status";
  metrics.recordUpstreamError(route.name, kind);
  if (status === 401) {
    return new GatewayError("upstream_auth_required", authRequiredMessage(route), { server: route.name });
  }
  if (status === 403) {
    return new GatewayError(
      "upstream_forbidden",
      `Upstream server '${route.name}' refused the request (it answered HTTP 403)`,
      { server: route.name },
    );
  }
  return new GatewayError("upstream_failed", `Upstream server '${route.name}' failed with HTTP ${status}`, {
    server: route.name,
  });
}

function compressedAnswer(
  route: UpstreamRoute,
  encoding: string | string[],
  metrics: GatewayMetrics,
): GatewayError {
  metrics.recordUpstreamError(route.name, "content_encoding");
  const named = Array.isArray(encoding) ? encoding.join(", ") : encoding;
  return new GatewayError(
    "upstream_failed",
    `Upstream server '${route.name}' answered with Content-Encoding '${named.slice(0, 64)}'; the gateway asks ` +
      "for identity and does not relay an answer it cannot read",
    { server: route.name },
  );
}

export async function forward(request: ForwardRequest, deps: ForwardDeps): Promise<ProxyAnswer> {
  const { route } = request;
  if (route.apiKeyProblem !== undefined) {
    throw new GatewayError("upstream_api_key_missing", route.apiKeyProblem, { server: route.name });
  }
  const stream = request.method === "GET";
  if (stream) {
    const release = deps.pools.acquireStream(route.origin);
    if (release === undefined) {
      throw new GatewayError(
        "upstream_busy",
        `Every stream connection to upstream server '${route.name}' is in use (SVC_UPSTREAM_STREAM_CONNECTIONS); try again later`,
        { server: route.name, headers: { "retry-after": "5" } },
      );
    }
    // The client's response closes when the stream ends for any reason (or when a non-stream answer is sent).
    onResponseClosed(request.client, release);
  } else {
    const release =
      deps.pools.callShare(route.origin).tryAcquire() ?? (await waitForConnection(request, deps));
    onResponseClosed(request.client, release);
  }
  const exchange = new UpstreamExchange(request.client);
  const upstreamHeaders = upstreamRequestHeaders(request.incomingHeaders, {
    requestId: request.requestId,
    allowed: deps.forwardRequestHeaders,
    clientAddress: request.client.req.socket.remoteAddress,
    publicUrl: deps.publicUrl,
    auth: request.auth ?? route.authHeaders,
  });
  if (request.traceHeaders !== undefined) Object.assign(upstreamHeaders, request.traceHeaders);
  deps.pools.pool(route.origin, stream ? "stream" : "call").dispatch(
    {
      method: request.method,
      path:
        request.search === ""
          ? route.path
          : `${route.path}${route.path.includes("?") ? "&" : "?"}${request.search.slice(1)}`,
      headers: upstreamHeaders,
      body: request.body,
      // Only the wait for response headers is bounded: a stream may then stay open for as long as it lives.
      headersTimeout: request.timeoutMs,
      bodyTimeout: 0,
    },
    exchange,
  );
  let head: UpstreamHead;
  try {
    head = await exchange.head;
  } catch (error) {
    if (exchange.clientGone) {
      throw new GatewayError(
        "client_closed_request",
        "Client closed the request before the upstream answered",
        {
          server: route.name,
        },
      );
    }
    throw upstreamFailure(route, error, deps.metrics);
  }

  const status = head.statusCode;
  if (isRejectedStatus(status)) {
    exchange.discard(request.timeoutMs);
    const error = rejectStatus(route, status, deps.metrics);
    if (status === 401 || status === 403) {
      throw new UpstreamAuthRejected(error, status, head.headers["www-authenticate"]);
    }
    throw error;
  }
  const encoding = head.headers["content-encoding"];
  if (encoding !== undefined && !isIdentityEncoding(encoding)) {
    exchange.abort(); // a compressed body is of no use to anyone: the connection is not worth keeping
    throw compressedAnswer(route, encoding, deps.metrics);
  }
  const issued = head.headers["mcp-session-id"];
  if (
    request.admitSession !== undefined &&
    status < 300 &&
    typeof issued === "string" &&
    issued !== request.incomingHeaders["mcp-session-id"]
  ) {
    try {
      await request.admitSession(issued);
    } catch (error) {
      exchange.abort();
      endUpstreamSession(deps, route, issued, upstreamHeaders);
      throw error;
    }
  }
  const headers = downstreamResponseHeaders(head.headers, request.requestId);
  if (request.cors !== undefined) {
    const vary = headers.vary;
    Object.assign(headers, request.cors);
    if (vary !== undefined) headers.vary = `${vary}, origin`;
  }
  if (request.extraHeaders !== undefined) Object.assign(headers, request.extraHeaders);
  // Media types compare case-insensitively, parameters aside (RFC 9110), as every client's parser compares them: a
  // `Text/Event-Stream` answer is a stream to the client, so it is one to the relay and its inspectors too.
  const mediaType = mediaTypeOf(head.headers["content-type"]);
  if (mediaType === "text/event-stream") {
    return streamResponse(request, deps, exchange, status, headers);
  }
  if (status === 204 || status === 304) {
    exchange.discard(request.timeoutMs);
    return { status, headers, body: null };
  }
  // A JSON answer passes byte for byte. A response policy that must read it (RBAC list filtering, scrubbing)
  // parses these bytes here; until one is configured nothing is re-serialised.
  // Unlike a stream, a JSON answer has an end to wait for: an upstream that stalls after its headers is a
  // timeout too (the same budget again, counted from the headers).
  const stalled = setTimeout(() => {
    exchange.abort(Object.assign(new Error("upstream body timeout"), { code: "UND_ERR_BODY_TIMEOUT" }));
  }, request.timeoutMs);
  // Bounded too: the whole answer is held before it is sent on, so an upstream must not choose how much.
  let bytes: Buffer;
  try {
    bytes = await exchange.bytes(deps.maxUpstreamResponseBytes);
  } catch (error) {
    if (error instanceof AnswerTooLargeError) {
      const message =
        error.declared === undefined
          ? `Upstream server '${route.name}' sent an answer larger than the limit of ${error.limit} bytes (SVC_MAX_UPSTREAM_RESPONSE_BYTES)`
          : `Upstream server '${route.name}' declared an answer of ${error.declared} bytes, over the limit of ${error.limit} bytes (SVC_MAX_UPSTREAM_RESPONSE_BYTES)`;
      throw reportTooLarge(
        route,
        new GatewayError("upstream_answer_too_large", message, { server: route.name, cause: error }),
        deps,
      );
    }
    throw upstreamFailure(route, error, deps.metrics);
  } finally {
    clearTimeout(stalled);
  }
  if (request.transformJson !== undefined && bytes.byteLength > 0) {
    try {
      if (!isJsonMediaType(mediaType)) {
        throw (request.unreadableAnswer ?? uninspectable)(
          "not_json",
          `an answer of Content-Type '${mediaType.slice(0, 64) || "none"}'`,
        );
      }
      bytes = await request.transformJson(bytes);
    } catch (error) {
      // A refusal of the answer's transport status (404 for a session gone, 405 for a GET the server does not serve,
      // 400, 429) keeps the status, which the client acts on, with the gateway's error as the body: never the bytes.
      if (!(error instanceof GatewayError) || status < 300) throw error;
      headers["content-type"] = "application/json";
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: jsonRpcErrorObject(error, request.requestId),
      });
      return { status, headers, body };
    }
  }
  return { status, headers, body: bytes.byteLength === 0 ? null : bytes };
}

/** The media type of a Content-Type value, lower-cased, without parameters; "" when there is none. */
function mediaTypeOf(contentType: string | string[] | undefined): string {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (value === undefined) return "";
  const end = value.indexOf(";");
  return (end === -1 ? value : value.slice(0, end)).trim().toLowerCase();
}

/** JSON, or a JSON-based media type (`application/problem+json`, ...). */
function isJsonMediaType(mediaType: string): boolean {
  return mediaType === "application/json" || mediaType.endsWith("+json");
}

/** The error for an unreadable answer when the inspection has none of its own (kept for callers without one). */
function uninspectable(_reason: string, detail: string): GatewayError {
  return new GatewayError(
    "upstream_uninspectable",
    `The upstream sent ${detail}, which the gateway cannot inspect`,
  );
}

/**
 * Every call connection to the upstream is busy: wait for this user's turn (fair-share.ts), at most the upstream
 * timeout, and not at all once the client has gone. The slow path only, so the signal costs nothing when a
 * connection is free.
 */
async function waitForConnection(request: ForwardRequest, deps: ForwardDeps): Promise<() => void> {
  const { route, client } = request;
  if (client.closed) {
    throw new GatewayError("client_closed_request", "Client closed the request before it was forwarded", {
      server: route.name,
    });
  }
  const abandon = new AbortController();
  const onClose = (): void =>
    abandon.abort(
      new GatewayError(
        "client_closed_request",
        "Client closed the request while it waited for an upstream connection",
        { server: route.name },
      ),
    );
  client.once("close", onClose);
  const timer = setTimeout(() => {
    deps.metrics.recordUpstreamError(route.name, "timeout");
    abandon.abort(
      new GatewayError(
        "upstream_timeout",
        `No connection to upstream server '${route.name}' came free in time (SVC_UPSTREAM_CONNECTIONS are all busy)`,
        { server: route.name },
      ),
    );
  }, request.timeoutMs);
  try {
    return await deps.pools.callShare(route.origin).wait(request.user, abandon.signal);
  } finally {
    clearTimeout(timer);
    client.off("close", onClose);
  }
}

/**
 * Ends a session the gateway refused to hand out (best effort, in the background): otherwise the upstream would keep
 * it, with its state, until its own idle timeout.
 */
function endUpstreamSession(
  deps: ForwardDeps,
  route: UpstreamRoute,
  sessionId: string,
  requestHeaders: Record<string, string | string[]>,
): void {
  const headers: Record<string, string | string[]> = { ...requestHeaders, "mcp-session-id": sessionId };
  delete headers["content-type"];
  deps.pools
    .pool(route.origin)
    .request({ method: "DELETE", path: route.path, headers, headersTimeout: 10_000, bodyTimeout: 10_000 })
    .then((answer) => answer.body.dump())
    .catch((error: unknown) =>
      deps.logger.warn("could not end a refused upstream session", {
        server: route.name,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
}

function streamResponse(
  request: ForwardRequest,
  deps: ForwardDeps,
  exchange: UpstreamExchange,
  status: number,
  headers: Record<string, string>,
): ProxyAnswer {
  const { route, client } = request;
  // Proxies between the gateway and the client must not buffer the stream either.
  headers["cache-control"] ??= "no-cache";
  headers["x-accel-buffering"] = "no";
  // The head is only stored here: Node sends it with the first event (one write), or the relay flushes it
  // alone if no event follows soon (sse-relay.ts).
  try {
    client.writeHead(status, headers);
  } catch (error) {
    // A header Node refuses to send (say, a character not allowed in a value): nothing was written, so the
    // pipeline can still answer with an error; the paused upstream body must not be left hanging.
    exchange.abort();
    throw error;
  }
  // Registered before the relay exists: a short answer can end inside relaySse() itself.
  let relay: SseRelay | undefined;
  const unregister = deps.streams.open(route.name, request.method === "GET" ? "get" : "post", () =>
    relay?.close(),
  );
  relay = relaySse({
    upstream: exchange,
    client,
    server: route.name,
    requestId: request.requestId,
    pendingIds: request.pendingIds,
    maxEventBytes: deps.maxSseEventBytes,
    inspect: request.inspectSseEvent ?? deps.inspectSseEvent,
    onEnd: ({ aborted, error }) => {
      unregister();
      if (error instanceof GatewayError && error.code === "upstream_answer_too_large") {
        reportTooLarge(route, error, deps);
      } else if (aborted) {
        deps.metrics.recordUpstreamError(route.name, "stream_aborted");
        deps.logger.warn("upstream stream aborted", {
          server: route.name,
          error: error instanceof Error ? error.message : "ended without answering and without event ids",
        });
      }
    },
  });
  // The real status stays on the answer for metrics, the access log and the audit record.
  return { status, headers, body: null, sent: true };
}
