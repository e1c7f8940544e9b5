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
  /**
   * Synchronous for in-process policies; a promise only when the inspector must wait for something (a remote
   * detector). The chain stays synchronous until an inspector actually answers with a promise, so the common path
   * costs no microtask.
   */
  inspect(record: RequestRecord, message: JsonRpcMessage): InspectorVerdict | Promise<InspectorVerdict>;
}

const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as { then?: unknown } | undefined)?.then === "function";

/** Applies `then` to a value or, once it settles, to a promise of it: synchronous when the value is. */
function after<T, R>(value: T | Promise<T>, then: (settled: T) => R | Promise<R>): R | Promise<R> {
  return isPromise(value) ? value.then(then) : then(value);
}

/** Where one message ended up after the inspectors from `from` on: kept or replaced, or refused with a verdict. */
type ChainOutcome =
  | { message: JsonRpcMessage }
  | { refused: Extract<InspectorVerdict, { action: "refuse" }> };

function runChain(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  message: JsonRpcMessage,
  from = 0,
): ChainOutcome | Promise<ChainOutcome> {
  let current = message;
  for (let index = from; index < inspectors.length; index++) {
    const verdict = (inspectors[index] as MessageInspector).inspect(record, current);
    if (isPromise(verdict)) {
      const at = current;
      return verdict.then((settled) => {
        if (settled.action === "refuse") return { refused: settled };
        return runChain(inspectors, record, settled.action === "replace" ? settled.message : at, index + 1);
      });
    }
    if (verdict.action === "refuse") return { refused: verdict };
    if (verdict.action === "replace") current = verdict.message;
  }
  return { message: current };
}

export interface InspectedRequest {
  messages: JsonRpcMessage[];
  changed: boolean;
}

/**
 * Runs the request inspectors over every message, in order; a refusal stops the request (thrown, or rejected: the
 * pipeline answers it like any other refusal). Returns the messages to forward and whether any was replaced (the body
 * is then serialised again; otherwise the client's bytes go upstream unchanged).
 */
export function inspectRequest(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  messages: readonly JsonRpcMessage[],
): InspectedRequest | Promise<InspectedRequest> {
  const out: JsonRpcMessage[] = [];
  let changed = false;
  const next = (index: number): InspectedRequest | Promise<InspectedRequest> => {
    for (let i = index; i < messages.length; i++) {
      const original = messages[i] as JsonRpcMessage;
      const outcome = runChain(inspectors, record, original);
      const settle = (settled: ChainOutcome): void => {
        if ("refused" in settled) throw settled.refused.error;
        if (settled.message !== original) changed = true;
        out.push(settled.message);
      };
      if (isPromise(outcome)) return outcome.then(settle).then(() => next(i + 1));
      settle(outcome);
    }
    return { messages: out, changed };
  };
  return next(0);
}

/**
 * One answer message through the response inspectors. A refusal replaces an answer by a JSON-RPC error for its id, so
 * the client's request still ends; anything else refused (a notification, a server's request) is dropped.
 */
function inspectAnswerMessage(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  original: JsonRpcMessage,
): JsonRpcMessage | undefined | Promise<JsonRpcMessage | undefined> {
  return after(runChain(inspectors, record, original), (outcome) => {
    if ("message" in outcome) return outcome.message;
    if (!isJsonRpcResponse(original)) return undefined;
    return {
      jsonrpc: "2.0",
      id: original.id,
      error: jsonRpcErrorObject(outcome.refused.error, record.requestId),
    } as JsonRpcMessage;
  });
}

/** What forward() applies to the answer: the JSON bytes as a whole, or each SSE event with its parsed message. */
export interface ResponseInspection {
  json(bytes: Buffer): Buffer | Promise<Buffer>;
  sse(
    event: SseEvent,
    message: JsonRpcMessage | undefined,
  ): SseEvent | undefined | Promise<SseEvent | undefined>;
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
        const items = value.map((item) =>
          typeof item !== "object" || item === null
            ? item
            : inspectAnswerMessage(inspectors, record, item as JsonRpcMessage),
        );
        const assemble = (settled: unknown[]): Buffer => {
          const changed = settled.some((item, i) => item !== value[i]);
          return changed ? Buffer.from(JSON.stringify(settled.filter((item) => item !== undefined))) : bytes;
        };
        return items.some(isPromise) ? Promise.all(items).then(assemble) : assemble(items);
      }
      if (typeof value !== "object" || value === null) return bytes;
      return after(inspectAnswerMessage(inspectors, record, value as JsonRpcMessage), (message) => {
        if (message === value) return bytes;
        return message === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(message));
      });
    },
    sse(event, message) {
      if (message === undefined) return event;
      return after(inspectAnswerMessage(inspectors, record, message), (out) => {
        if (out === message) return event;
        // A dropped message leaves its event's id (the client's resumption point) without data.
        if (out === undefined) return event.id === undefined ? undefined : { id: event.id };
        return { ...event, data: JSON.stringify(out).split("\n") };
      });
    },
  };
}
