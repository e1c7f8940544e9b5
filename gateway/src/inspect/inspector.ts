// The seat every message policy sits in. A request inspector sees each JSON-RPC message of a POST before it is
// forwarded; a response inspector sees each message coming back, in a JSON answer (parsed once, whatever the number
// of inspectors) and in an SSE answer (one event at a time: a stream is never buffered). Each answers keep, replace
// (the message to send instead) or refuse (the error to answer with). A new policy is a new inspector in a list
// (chain.ts), not a new parameter threaded through the proxy.

import { type JsonRpcId, jsonRpcErrorObject } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import type { SseEvent } from "../sse/sse-event.ts";
import { type RequestRecord, requestAnswered } from "./request-record.ts";

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
  | { refused: Extract<InspectorVerdict, { action: "refuse" }>; by: string };

function runChain(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  message: JsonRpcMessage,
  from = 0,
): ChainOutcome | Promise<ChainOutcome> {
  let current = message;
  for (let index = from; index < inspectors.length; index++) {
    const inspector = inspectors[index] as MessageInspector;
    const verdict = inspector.inspect(record, current);
    if (isPromise(verdict)) {
      const at = current;
      return verdict.then((settled) => {
        if (settled.action === "refuse") return { refused: settled, by: inspector.name };
        return runChain(inspectors, record, settled.action === "replace" ? settled.message : at, index + 1);
      });
    }
    if (verdict.action === "refuse") return { refused: verdict, by: inspector.name };
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

/** A message the response inspection did not pass on as the upstream sent it (never its text). */
export interface WithheldMessage {
  /** The inspector that refused it (`firewall`, `pii`, `rbac`), or `relay` for what no inspector could read. */
  readonly inspector: string;
  /** Why, as a GatewayError code or a short reason (`unattributable`, `unparseable`, `not_json`). */
  readonly reason: string;
  /** The message's method, or the method of the request it answers, when known. */
  readonly method: string | undefined;
}

/** Told about every withheld message: the audit trail records it (pipeline). */
export type WithheldListener = (record: RequestRecord, withheld: WithheldMessage) => void;

/** What the response inspection reports besides the inspectors' own findings. */
export interface ResponseListeners {
  onWithheld?: WithheldListener;
  /** Each message as it goes to the client (after the inspectors): the pipeline learns from answers (retry links). */
  onPassed?: (record: RequestRecord, message: JsonRpcMessage) => void;
}

/**
 * The request an answer answers, by the rule clients match answers with: its exact id, else the one request whose id
 * the answer's id reads as (the SDK client matches `Number(id)`, so an answer `"7"` is its answer to request 7).
 * Undefined when none or more than one could be meant.
 */
function answeredRequest(record: RequestRecord, id: JsonRpcId | undefined): JsonRpcMessage | undefined {
  const exact = requestAnswered(record, id);
  if (exact !== undefined || id === undefined || id === null) return exact;
  const wanted = Number(id);
  if (!Number.isFinite(wanted)) return undefined;
  let found: JsonRpcMessage | undefined;
  for (const message of record.messages ?? []) {
    if (!isJsonRpcRequest(message) || Number(message.id) !== wanted) continue;
    if (found !== undefined) return undefined; // 7 and "7" both pending: no way to tell which is meant
    found = message;
  }
  return found;
}

/** What the inspection decided for one upstream message. */
type AnswerOutcome = JsonRpcMessage | undefined;

/**
 * One upstream message through the response inspectors. An answer is first attributed to the request of this exchange
 * it answers (its id normalised to that request's exact id, so every inspector and the client agree on which request
 * it is); on a POST, an answer to none of its requests is withheld (it can only be misdirected), while on a GET stream
 * (resumption replays earlier answers) it is inspected as unattributed: every text any result may hold. A refusal
 * replaces an answer by a JSON-RPC error for its id, so the client's request still ends; anything else refused (a
 * notification, a server's request) is dropped.
 */
function inspectUpstreamMessage(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  original: JsonRpcMessage,
  withheld: (what: WithheldMessage) => void,
  passed: (message: JsonRpcMessage) => void,
): AnswerOutcome | Promise<AnswerOutcome> {
  let message = original;
  if (isJsonRpcResponse(original)) {
    const request = answeredRequest(record, original.id);
    if (request === undefined) {
      const wholeRequestError = original.id === null && "error" in original;
      if (record.httpMethod === "POST" && !wholeRequestError) {
        withheld({ inspector: "relay", reason: "unattributable", method: undefined });
        return undefined;
      }
    } else if (request.id !== original.id) message = { ...original, id: request.id };
  }
  return after(runChain(inspectors, record, message), (outcome) => {
    if ("message" in outcome) {
      passed(outcome.message);
      return outcome.message;
    }
    withheld({
      inspector: outcome.by,
      reason: outcome.refused.error.code,
      method: methodOf(record, message),
    });
    if (!isJsonRpcResponse(message)) return undefined;
    return {
      jsonrpc: "2.0",
      id: message.id,
      error: jsonRpcErrorObject(outcome.refused.error, record.requestId),
    } as JsonRpcMessage;
  });
}

function methodOf(record: RequestRecord, message: JsonRpcMessage): string | undefined {
  if (typeof message.method === "string") return message.method;
  const method = requestAnswered(record, message.id)?.method;
  return typeof method === "string" ? method : undefined;
}

/** What forward() applies to the answer: the JSON bytes as a whole, or each SSE event with its parsed message. */
export interface ResponseInspection {
  /**
   * A JSON answer's bytes: parsed once (a byte order mark dropped, as a client's decoder does), inspected, serialised
   * again only when a message changed. Throws GatewayError `upstream_uninspectable` for bytes that are not JSON-RPC.
   */
  json(bytes: Buffer): Buffer | Promise<Buffer>;
  /**
   * One SSE event and its parsed JSON-RPC message (undefined when its data is none or not a JSON-RPC object): what goes
   * to the client instead. Only what an inspector saw leaves with data; comments leave empty (a keep-alive still, but
   * none of the upstream's text). Throws (or rejects with) GatewayError `upstream_uninspectable` when a POST stream
   * carries data the gateway cannot read: the relay then ends the stream with an error for each unanswered request.
   */
  sse(
    event: SseEvent,
    message: JsonRpcMessage | undefined,
  ): SseEvent | undefined | Promise<SseEvent | undefined>;
  /** The error for an answer the inspection cannot read at all (not JSON, say), on record like any withheld message. */
  unreadable(reason: string, detail: string): GatewayError;
}

/** The event without its data: its id (the client's resumption point) and retry survive; comments go empty. */
function withoutData(event: SseEvent): SseEvent | undefined {
  const out: SseEvent = {};
  if (event.id !== undefined) out.id = event.id;
  if (event.retry !== undefined) out.retry = event.retry;
  if (event.comments !== undefined) out.comments = [""];
  return out.id === undefined && out.retry === undefined && out.comments === undefined ? undefined : out;
}

const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/** Undefined when no inspector applies, so the answer passes byte for byte without being parsed. */
export function responseInspection(
  inspectors: readonly MessageInspector[],
  record: RequestRecord,
  listeners: ResponseListeners = {},
): ResponseInspection | undefined {
  if (inspectors.length === 0) return undefined;
  const withheld = (what: WithheldMessage): void => listeners.onWithheld?.(record, what);
  const passed = (message: JsonRpcMessage): void => listeners.onPassed?.(record, message);
  const unreadable = (reason: string, detail: string): GatewayError => {
    withheld({ inspector: "relay", reason, method: undefined });
    return new GatewayError(
      "upstream_uninspectable",
      `Upstream server '${record.server}' sent ${detail}, which the gateway's inspection cannot read; it was not forwarded`,
      { server: record.server },
    );
  };
  const inspect = (message: JsonRpcMessage) =>
    inspectUpstreamMessage(inspectors, record, message, withheld, passed);
  return {
    unreadable,
    json(bytes) {
      const body = bytes.subarray(0, 3).equals(BYTE_ORDER_MARK) ? bytes.subarray(3) : bytes;
      let value: unknown;
      try {
        value = JSON.parse(body.toString("utf8"));
      } catch {
        throw unreadable("unparseable", "an answer that is not JSON");
      }
      if (Array.isArray(value)) {
        if (value.length === 0 || !value.every(isObject)) {
          throw unreadable("not_json_rpc", "a JSON array that is not a batch of JSON-RPC messages");
        }
        const items = value.map((item) => inspect(item as JsonRpcMessage));
        const assemble = (settled: AnswerOutcome[]): Buffer => {
          if (settled.every((item, i) => item === value[i])) return body;
          const kept = settled.filter((item) => item !== undefined);
          if (kept.length === 0)
            throw unreadable("unattributable", "a batch answering none of this request's ids");
          return Buffer.from(JSON.stringify(kept));
        };
        return items.some(isPromise) ? Promise.all(items).then(assemble) : assemble(items as AnswerOutcome[]);
      }
      if (!isObject(value)) throw unreadable("not_json_rpc", "a JSON value that is not a JSON-RPC message");
      return after(inspect(value as JsonRpcMessage), (message) => {
        if (message === value) return body;
        if (message === undefined) {
          throw unreadable("unattributable", "an answer to none of this request's ids");
        }
        return Buffer.from(JSON.stringify(message));
      });
    },
    sse(event, message) {
      // No data, or empty data (a priming event: an id to resume from, nothing to read).
      if (event.data === undefined || (event.data.length === 1 && event.data[0] === "")) {
        return event.comments === undefined ? event : { ...event, comments: [""] };
      }
      // Clients dispatch only `message` events; another type's data is read by nobody, so nobody needs it.
      if (event.event !== undefined && event.event !== "message") return withoutData(event);
      if (message === undefined) {
        if (record.httpMethod === "POST")
          throw unreadable("unparseable", "an SSE event whose data is not JSON-RPC");
        withheld({ inspector: "relay", reason: "unparseable", method: undefined });
        return withoutData(event);
      }
      return after(inspect(message), (out) => {
        if (out === message) return event.comments === undefined ? event : { ...event, comments: [""] };
        // A dropped message leaves its event's id (the client's resumption point) without data.
        if (out === undefined) return withoutData(event);
        const replaced: SseEvent = { ...event, data: JSON.stringify(out).split("\n") };
        if (event.comments !== undefined) replaced.comments = [""];
        return replaced;
      });
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
