// The gateway's one error type. Every failure on the request path is thrown (or returned) as a GatewayError
// with a code; `error-response.ts` is the only place that turns a code into an HTTP status and body, so the
// mapping cannot drift between the proxy, the pipeline steps and the admin endpoints.

/** Each code, the HTTP status it maps to and the JSON-RPC error code used when the request was parsed. */
export const GATEWAY_ERROR_CODES = {
  // Client errors, raised before or while reading the request.
  path_not_found: { status: 404, rpcCode: -32601 },
  server_not_found: { status: 404, rpcCode: -32601 },
  server_disabled: { status: 404, rpcCode: -32601 },
  origin_not_allowed: { status: 403, rpcCode: -32600 },
  host_not_allowed: { status: 403, rpcCode: -32600 },
  method_not_allowed: { status: 405, rpcCode: -32600 },
  body_too_large: { status: 413, rpcCode: -32600 },
  unsupported_media_type: { status: 415, rpcCode: -32600 },
  invalid_json: { status: 400, rpcCode: -32700 },
  invalid_request: { status: 400, rpcCode: -32600 },
  // More JSON-RPC messages in one POST than SVC_MAX_BATCH_MESSAGES: refused before any per-message work.
  batch_too_large: { status: 400, rpcCode: -32600 },
  // An Mcp-Session-Id this caller does not own: unknown, expired, ended, or another user's (the gateway answers all
  // of these alike, like an MCP server answers an unknown session, so nobody learns whether an id is someone's).
  session_not_found: { status: 404, rpcCode: -32001 },
  // Access control (docs/access.md). `unauthorized` is raised before the body is read, so it is always the JSON
  // body plus a WWW-Authenticate challenge; the JSON-RPC codes below apply once a request was parsed.
  unauthorized: { status: 401, rpcCode: -32040 },
  forbidden: { status: 403, rpcCode: -32043 },
  // Capability RBAC refuses a parsed call: HTTP 200 with the JSON-RPC error, so an MCP client reports it as the
  // call's error (a 403 would surface as a transport failure).
  capability_forbidden: { status: 200, rpcCode: -32043 },
  // A message past what PII scrubbing inspects (a string, depth or size bound): refused rather than forwarded
  // with parts unscanned. HTTP 200 with the JSON-RPC error, like a capability refusal.
  uninspectable: { status: 200, rpcCode: -32013 },
  // The prompt-injection firewall recognised an injection. A client's request is refused before it is forwarded with
  // HTTP 403 (the request itself is the attack, not one call of it); an upstream's answer is
  // replaced by this JSON-RPC error for its id, so the model never reads the planted instruction.
  injection_detected: { status: 403, rpcCode: -32014 },
  // A name or URI no upstream should be handed (control or format characters, white space at an end, …), or with
  // capability RBAC on a capability param that is missing: JSON-RPC's invalid params, HTTP 200 for the same reason.
  invalid_params: { status: 200, rpcCode: -32602 },
  // With capability RBAC on, a method the gateway does not know is not forwarded: it cannot tell what the method
  // touches. -32601 (method not found) because through this gateway it does not exist; a permission code would send
  // the caller looking for a group that does not help. A body of notifications only gets an HTTP error instead
  // (Streamable HTTP: input the server cannot accept), as notifications are never answered in JSON-RPC.
  unknown_method: { status: 200, rpcCode: -32601 },
  unknown_notification: { status: 400, rpcCode: -32601 },
  rate_limited: { status: 429, rpcCode: -32029 },
  // A per-user cap on what is open at once (sessions, requests in flight, GET streams).
  user_capacity: { status: 429, rpcCode: -32029 },
  // A JSON-RPC request id reused within a session, or a DPoP proof presented twice: 409, the request conflicts
  // with one already accepted (a 400 would suggest the message itself is malformed).
  replayed: { status: 409, rpcCode: -32009 },
  // Upstream failures: always name the server.
  upstream_unreachable: { status: 502, rpcCode: -32002 },
  upstream_failed: { status: 502, rpcCode: -32002 },
  upstream_stream_aborted: { status: 502, rpcCode: -32002 },
  // A JSON answer over SVC_MAX_UPSTREAM_RESPONSE_BYTES, or one SSE event over SVC_MAX_SSE_EVENT_BYTES (then as
  // an error event on the stream: its 200 head has already gone out).
  upstream_answer_too_large: { status: 502, rpcCode: -32002 },
  // An answer the response inspectors cannot read (not JSON, not JSON-RPC, answering none of the request's ids) while
  // one is on: never forwarded unread. As an error event on a stream whose head has gone out.
  upstream_uninspectable: { status: 502, rpcCode: -32002 },
  upstream_auth_required: { status: 502, rpcCode: -32001 },
  // The upstream refused the gateway's request (403). Answered by the gateway, without the upstream's body or
  // challenge: the client is refused too, but must not be sent to re-authorise wherever the upstream says.
  upstream_forbidden: { status: 403, rpcCode: -32001 },
  upstream_api_key_missing: { status: 502, rpcCode: -32001 },
  // upstream_auth_type oauth and the gateway holds no upstream token for this user (or the upstream wants more
  // scopes): the user must consent at the vendor. MCP's URL-mode elicitation-required error (-32042), carrying the
  // authorization URL, with HTTP 200 so an MCP client surfaces it as the call's error (docs/upstream-oauth.md).
  upstream_authorization_required: { status: 200, rpcCode: -32042 },
  // upstream_auth_type oauth cannot work for this server: no metadata, no registration, a token endpoint failing.
  upstream_oauth_failed: { status: 502, rpcCode: -32001 },
  upstream_timeout: { status: 504, rpcCode: -32003 },
  // The client gave up before the answer (nginx's 499); nobody reads this answer, it is for logs and metrics.
  client_closed_request: { status: 499, rpcCode: -32000 },
  // The gateway itself.
  not_ready: { status: 503, rpcCode: -32000 },
  // Session ownership cannot be checked (the KV store is unreachable): refused, never forwarded unchecked.
  session_store_unavailable: { status: 503, rpcCode: -32000 },
  // Every stream connection this process may open to the upstream is in use.
  upstream_busy: { status: 503, rpcCode: -32000 },
  internal: { status: 500, rpcCode: -32603 },
} as const satisfies Record<string, { status: number; rpcCode: number }>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERROR_CODES;

export class GatewayError extends Error {
  override readonly name = "GatewayError";
  readonly code: GatewayErrorCode;
  /** Upstream server name, when the error concerns one (shown to the client: it is not a secret). */
  readonly server: string | undefined;
  /** Extra response headers, e.g. `Allow` on a 405. */
  readonly headers: Record<string, string> | undefined;
  /** Extra members of the JSON-RPC error's `data` (and of the JSON body's `error`), e.g. an authorization URL. */
  readonly data: Record<string, unknown> | undefined;

  constructor(
    code: GatewayErrorCode,
    message: string,
    options?: {
      server?: string;
      cause?: unknown;
      headers?: Record<string, string>;
      data?: Record<string, unknown>;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.server = options?.server;
    this.headers = options?.headers;
    this.data = options?.data;
  }

  get status(): number {
    return GATEWAY_ERROR_CODES[this.code].status;
  }
}

/** Anything thrown that is not a GatewayError becomes `internal`, with a message that leaks nothing. */
export function asGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError("internal", "Internal gateway error", { cause: error });
}
