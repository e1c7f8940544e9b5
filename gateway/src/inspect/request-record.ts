// Everything the gateway learns about one request on `/{server}/mcp`, in one place, filled in step by step as the
// pipeline goes. The steps, the message inspectors, the audit record, the metrics and the access log all read it,
// so what was decided is written once and reported the same way everywhere.
import type { ErrorContext, JsonRpcId } from "../errors/error-response.ts";
import type { GatewayErrorCode } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import type { Capability } from "../rbac/capability.ts";
import type { RbacDecision } from "../rbac/decide.ts";
import type { UpstreamRoute } from "../runtime/config-snapshot.ts";
import { isJsonRpcRequest, type JsonRpcMessage, rpcIdKey } from "../sse/json-rpc.ts";
import type { WithheldMessage } from "./inspector.ts";

export interface RequestRecord {
  readonly requestId: string;
  readonly httpMethod: string;
  /** performance.now() when the request arrived. */
  readonly started: number;
  /** The client's socket address (the TCP peer), as Node reports it. */
  readonly source: string | undefined;
  /** How an error is answered: CORS, RateLimit headers, the JSON-RPC ids once the body is parsed. */
  readonly errorContext: ErrorContext;
  /** The server name once routed; "" before. */
  server: string;
  route?: UpstreamRoute;
  principal?: Principal;
  /** The principal's key for shared state (principalKey). */
  owner?: string;
  /** The JSON-RPC method, `batch`, or the HTTP method before (or without) a body. */
  method: unknown;
  /** The parsed messages of a POST, in order; the request inspectors may have replaced some. */
  messages?: JsonRpcMessage[];
  batch?: boolean;
  /** The capability a single-message request acts on (tools/call, prompts/get, resources/*). */
  capability?: Capability;
  /** RBAC decisions to put on the audit record (servers with rbac_audit). */
  decisions?: Array<{ decision: RbacDecision; capability: Capability | undefined }>;
  /** The refusal or failure that answered the request, if one did. */
  failure?: { code: GatewayErrorCode; message: string; authFailure?: string };
  /** Messages of the answer that were not passed on as sent (a JSON answer's: known before the call is recorded). */
  withheld?: { count: number; first: WithheldMessage };
  /**
   * The request a multi round-trip retry continues (2026-07-28): the request id of the exchange whose `input_required`
   * result carried the `requestState` this request echoes, when this gateway saw it.
   */
  retryOf?: string;
  /** Headers every answer to this request carries (RateLimit once counted). */
  extraHeaders?: Record<string, string>;
  cors?: Record<string, string>;
}

export function newRequestRecord(
  requestId: string,
  httpMethod: string,
  source: string | undefined,
): RequestRecord {
  return {
    requestId,
    httpMethod,
    started: performance.now(),
    source,
    errorContext: { requestId },
    server: "",
    method: httpMethod,
  };
}

/** The request (in this POST) that an answer answers: its method says what the answer's result holds. */
export function requestAnswered(
  record: RequestRecord,
  id: JsonRpcId | undefined,
): JsonRpcMessage | undefined {
  const key = rpcIdKey(id);
  for (const message of record.messages ?? []) {
    if (isJsonRpcRequest(message) && rpcIdKey(message.id) === key) return message;
  }
  return undefined;
}
