// Pipeline step 4, second half: what the request is, in JSON-RPC terms. The body text itself is forwarded
// unchanged; this only extracts what routing, labels, errors and (later) policies need.
//
// Batches (decision): a JSON array is accepted and forwarded whole. The 2025-03-26 transport allows
// batches, later revisions removed them, and the upstream knows which revision its session speaks, so
// the gateway neither splits nor rejects a batch (an empty one is invalid JSON-RPC and answered with 400).
// Policies see every message of a batch; the metrics label a batch as method `batch`. A batch may carry at most
// SVC_MAX_BATCH_MESSAGES messages, checked right after JSON parsing and before any per-message work (rate limit,
// RBAC, replay keys); the parse itself is bounded by the body size limit.
import type { JsonRpcId } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { isJsonRpcRequest, type JsonRpcMessage, parseJsonRpcBody } from "../sse/json-rpc.ts";

export interface ParsedRequest {
  messages: JsonRpcMessage[];
  batch: boolean;
  /** Ids of the messages that expect an answer. */
  requestIds: JsonRpcId[];
  /** Label for logs and metrics: the method, or `batch`. */
  method: unknown;
}

export function parseRequest(body: Buffer, maxBatchMessages: number): ParsedRequest {
  const parsed = parseJsonRpcBody(body.toString("utf8"));
  if (!parsed.ok) throw new GatewayError(parsed.reason, parsed.message);
  if (parsed.messages.length > maxBatchMessages) {
    throw new GatewayError(
      "batch_too_large",
      `A batch may carry at most ${maxBatchMessages} JSON-RPC messages (SVC_MAX_BATCH_MESSAGES); this one has ${parsed.messages.length}`,
    );
  }
  const requestIds: JsonRpcId[] = [];
  for (const message of parsed.messages) {
    if (isJsonRpcRequest(message)) requestIds.push(message.id as JsonRpcId);
  }
  return {
    messages: parsed.messages,
    batch: parsed.batch,
    requestIds,
    method: parsed.batch ? "batch" : parsed.messages[0]?.method,
  };
}
