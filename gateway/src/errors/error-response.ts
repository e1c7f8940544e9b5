// The one place a GatewayError becomes a response. Before the body is parsed the client gets a small JSON
// object; once the request is known to be JSON-RPC, it gets JSON-RPC error(s) carrying the request ids, so
// an MCP client surfaces the message instead of a bare HTTP failure.
import { GATEWAY_ERROR_CODES, type GatewayError } from "./gateway-error.ts";

export type JsonRpcId = string | number | null;

/** What the pipeline knows about the request when it fails. `ids` undefined = body not (yet) parsed. */
export interface ErrorContext {
  requestId: string;
  /** Ids of the JSON-RPC requests in the body; [] for GET/DELETE and notification-only bodies. */
  rpcIds?: JsonRpcId[];
  /** True when the body was a JSON-RPC batch: the answer is then an array too. */
  batch?: boolean;
  /** CORS headers for an admitted browser origin, so the browser lets the client read the error. */
  cors?: Record<string, string>;
  /** Headers every answer to this request carries, errors included (e.g. RateLimit once counted). */
  extraHeaders?: Record<string, string>;
}

export interface ErrorResponseParts {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function jsonRpcErrorObject(error: GatewayError, requestId: string): Record<string, unknown> {
  const data: Record<string, unknown> = { ...error.data, reason: error.code, request_id: requestId };
  if (error.server !== undefined) data.server = error.server;
  return { code: GATEWAY_ERROR_CODES[error.code].rpcCode, message: error.message, data };
}

export function errorResponseParts(error: GatewayError, context: ErrorContext): ErrorResponseParts {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-request-id": context.requestId,
    ...context.cors,
    ...context.extraHeaders,
    ...error.headers,
  };
  if (context.rpcIds === undefined) {
    const payload: Record<string, unknown> = { ...error.data, code: error.code, message: error.message };
    if (error.server !== undefined) payload.server = error.server;
    return {
      status: error.status,
      headers,
      body: JSON.stringify({ error: payload, request_id: context.requestId }),
    };
  }
  const rpcError = jsonRpcErrorObject(error, context.requestId);
  const ids: JsonRpcId[] = context.rpcIds.length > 0 ? context.rpcIds : [null];
  const messages = ids.map((id) => ({ jsonrpc: "2.0", id, error: rpcError }));
  const body = context.batch === true ? messages : messages[0];
  return { status: error.status, headers, body: JSON.stringify(body) };
}

export function errorResponse(error: GatewayError, context: ErrorContext): Response {
  const parts = errorResponseParts(error, context);
  return new Response(parts.body, { status: parts.status, headers: parts.headers });
}
