// The seat every message policy sits in. A request inspector sees each JSON-RPC message of a POST before it is
// forwarded; a response inspector sees each message coming back, in a JSON answer (parsed once, whatever the number
// of inspectors) and in an SSE answer (one event at a time: a stream is never buffered). Each answers keep, replace
// (the message to send instead) or refuse (the error to answer with). A new policy is a new inspector in a list
// (chain.ts), not a new parameter threaded through the proxy.

import { jsonRpcErrorObject } from "../errors/error-response.ts";
import type { GatewayError } from "../errors/gateway-error.ts";
import { isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import type { SseEvent } from "../sse/sse-event.ts";
import type { RequestRecord } from "./request-record.ts";

export type InspectorVerdict =
  | { action: "keep" }
  | { action: "replace"; message: JsonRpcMessage }
  | { action: "refuse"; error: GatewayError };

export const KEEP: InspectorVerdict = Object.freeze({ action: "keep" });

export interface MessageInspector {
  /** For logs and audit: `rbac`, `pii`, `firewall`. */
  readonly name: string;
  inspect(record: RequestRecord, message: JsonRpcMessage): InspectorVerdict;
}

/**
 * Runs the request inspectors over every message, in order; a refusal stops the request (thrown: the pipeline
 * answers it like any other refusal). Returns the messages to forward and whether any was replaced (the body is then
 * serialised again; otherwise the client's bytes go upstream unchanged).
 */
export function inspectRequest(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  messages: readonly JsonRpcMessage[],
): { messages: JsonRpcMessage[]; changed: boolean } {
  let changed = false;
  const out = messages.map((original) => {
    let message = original;
    for (const inspector of inspectors) {
      const verdict = inspector.inspect(record, message);
      if (verdict.action === "refuse") throw verdict.error;
      if (verdict.action === "replace") {
        message = verdict.message;
        changed = true;
      }
    }
    return message;
  });
  return { messages: out, changed };
}

/**
 * One answer message through the response inspectors. A refusal replaces an answer by a JSON-RPC error for its id, so
 * the client's request still ends; anything else refused (a notification, a server's request) is dropped.
 */
function inspectAnswerMessage(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  original: JsonRpcMessage,
): JsonRpcMessage | undefined {
  let message = original;
  for (const inspector of inspectors) {
    const verdict = inspector.inspect(record, message);
    if (verdict.action === "replace") message = verdict.message;
    else if (verdict.action === "refuse") {
      if (!isJsonRpcResponse(message)) return undefined;
      return { jsonrpc: "2.0", id: message.id, error: jsonRpcErrorObject(verdict.error, record.requestId) };
    }
  }
  return message;
}

/** What forward() applies to the answer: the JSON bytes as a whole, or each SSE event with its parsed message. */
export interface ResponseInspection {
  json(bytes: Buffer): Buffer;
  sse(event: SseEvent, message: JsonRpcMessage | undefined): SseEvent | undefined;
}

/** Undefined when no inspector applies, so the answer passes byte for byte without being parsed. */
export function responseInspection(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
): ResponseInspection | undefined {
  if (inspectors.length === 0) return undefined;
  return {
    json(bytes) {
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString("utf8"));
      } catch {
        // Not JSON: no message an inspector could read (the client cannot read one either).
        return bytes;
      }
      if (Array.isArray(value)) {
        let changed = false;
        const out: unknown[] = [];
        for (const item of value) {
          if (typeof item !== "object" || item === null) {
            out.push(item);
            continue;
          }
          const message = inspectAnswerMessage(inspectors, record, item as JsonRpcMessage);
          if (message !== item) changed = true;
          if (message !== undefined) out.push(message);
        }
        return changed ? Buffer.from(JSON.stringify(out)) : bytes;
      }
      if (typeof value !== "object" || value === null) return bytes;
      const message = inspectAnswerMessage(inspectors, record, value as JsonRpcMessage);
      if (message === value) return bytes;
      return message === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(message));
    },
    sse(event, message) {
      if (message === undefined) return event;
      const out = inspectAnswerMessage(inspectors, record, message);
      if (out === message) return event;
      // A dropped message leaves its event's id (the client's resumption point) without data.
      if (out === undefined) return event.id === undefined ? undefined : { id: event.id };
      return { ...event, data: JSON.stringify(out).split("\n") };
    },
  };
}
