// PII scrubbing as a message inspector: which parts of which MCP message carry user data, in each direction. The
// engine (pii/) scrubs strings and JSON values; this file knows the MCP shapes, so a tool's arguments are scrubbed as
// data while a result's image bytes, URIs, names and MIME types are left alone (scrubbing base64 would corrupt it and
// find "phone numbers" in noise; renaming a URI would break it).
//
// Up (client → upstream): tools/call and prompts/get arguments, the completion argument and its context, and the
// client's answers to the server's sampling and elicitation requests.
// Down (upstream → client): results of tools/call (text and embedded-resource content, structuredContent),
// resources/read (text contents), prompts/get (messages, description) and completion/complete (values); the server's
// own requests (sampling messages and system prompt, elicitation message) and notifications (log data, progress
// message), on JSON answers and on every SSE event alike.
import { GatewayError } from "../errors/gateway-error.ts";
import type { CompiledScrubbing, LimitExceeded } from "../pii/index.ts";
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import { type InspectorVerdict, KEEP, type MessageInspector } from "./inspector.ts";
import { type RequestRecord, requestAnswered } from "./request-record.ts";

export type ScrubDirection = "request" | "response";

/** Told about every message that had something replaced: which entity types, how many; never the values. */
export type ScrubListener = (
  record: RequestRecord,
  direction: ScrubDirection,
  method: string | undefined,
  counts: ScrubCounts,
) => void;

type Json = Record<string, unknown>;
/** Replacements by entity type (or rule), never the values. */
export type ScrubCounts = Record<string, number>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Collects what one message's scrubbing replaced; `changed` once anything was. */
class Tally {
  readonly counts: ScrubCounts = {};
  readonly scrubbing: CompiledScrubbing;
  changed = false;
  /** The first bound a scan reached: the message is then refused, never forwarded with unscanned holes. */
  limit: LimitExceeded | undefined;

  constructor(scrubbing: CompiledScrubbing) {
    this.scrubbing = scrubbing;
  }

  text(text: unknown): unknown {
    if (typeof text !== "string") return text;
    return this.#add(this.scrubbing.scrubText(text));
  }

  value(value: unknown): unknown {
    if (value === undefined) return value;
    return this.#add(this.scrubbing.scrubValue(value));
  }

  /** A content block: text and embedded text resources are scrubbed; images, audio, blobs and links are not data. */
  content(block: unknown): unknown {
    if (Array.isArray(block)) {
      const out = block.map((item) => this.content(item));
      return out.some((item, i) => item !== block[i]) ? out : block;
    }
    if (!isObject(block)) return block;
    if (block.type === "text") return this.#field(block, "text", this.text(block.text));
    if (block.type === "resource" && isObject(block.resource)) {
      return this.#field(block, "resource", this.resourceContents(block.resource));
    }
    return block;
  }

  resourceContents(contents: unknown): unknown {
    return isObject(contents) ? this.#field(contents, "text", this.text(contents.text)) : contents;
  }

  #add(result: {
    value: unknown;
    changed: boolean;
    counts: ScrubCounts;
    limitExceeded?: LimitExceeded;
  }): unknown {
    this.limit ??= result.limitExceeded;
    if (!result.changed) return result.value;
    this.changed = true;
    for (const [entity, count] of Object.entries(result.counts)) {
      this.counts[entity] = (this.counts[entity] ?? 0) + count;
    }
    return result.value;
  }

  /** The object with one field replaced, or the same object when the value did not change. */
  #field(object: Json, name: string, value: unknown): Json {
    return value === object[name] ? object : { ...object, [name]: value };
  }
}

/** Rewrites `params` (or `result`) of a message through `edit`; the same message when nothing changed. */
function withPart(
  message: JsonRpcMessage,
  part: "params" | "result",
  edit: (value: Json, tally: Tally) => Json,
  tally: Tally,
): JsonRpcMessage {
  const value = message[part];
  if (!isObject(value)) return message;
  const out = edit(value, tally);
  return out === value ? message : { ...message, [part]: out };
}

function set(object: Json, name: string, value: unknown): Json {
  return value === object[name] ? object : { ...object, [name]: value };
}

function scrubRequest(message: JsonRpcMessage, tally: Tally): JsonRpcMessage {
  if (isJsonRpcRequest(message)) {
    switch (message.method) {
      case "tools/call":
      case "prompts/get":
        return withPart(message, "params", (p, t) => set(p, "arguments", t.value(p.arguments)), tally);
      case "completion/complete":
        return withPart(
          message,
          "params",
          (p, t) => {
            let out = p;
            if (isObject(p.argument))
              out = set(out, "argument", set(p.argument, "value", t.text(p.argument.value)));
            if (isObject(p.context))
              out = set(out, "context", set(p.context, "arguments", t.value(p.context.arguments)));
            return out;
          },
          tally,
        );
      default:
        return message;
    }
  }
  // The client's answer to a server request: a sampling result carries content, an elicitation result form data.
  if (isJsonRpcResponse(message)) {
    return withPart(
      message,
      "result",
      (r, t) => {
        if (typeof r.action === "string") return set(r, "content", t.value(r.content));
        return r.content === undefined ? r : set(r, "content", t.content(r.content));
      },
      tally,
    );
  }
  return message;
}

function scrubAnswer(message: JsonRpcMessage, method: string | undefined, tally: Tally): JsonRpcMessage {
  switch (method) {
    case "tools/call":
      return withPart(
        message,
        "result",
        (r, t) =>
          set(set(r, "content", t.content(r.content)), "structuredContent", t.value(r.structuredContent)),
        tally,
      );
    case "resources/read":
      return withPart(
        message,
        "result",
        (r, t) => {
          const contents = r.contents;
          if (!Array.isArray(contents)) return r;
          const out = contents.map((item) => t.resourceContents(item));
          return out.some((item, i) => item !== contents[i]) ? { ...r, contents: out } : r;
        },
        tally,
      );
    case "prompts/get":
      return withPart(
        message,
        "result",
        (r, t) => set(set(r, "description", t.text(r.description)), "messages", messages(r.messages, t)),
        tally,
      );
    case "completion/complete":
      return withPart(
        message,
        "result",
        (r, t) => {
          if (!isObject(r.completion) || !Array.isArray(r.completion.values)) return r;
          const values = r.completion.values;
          const out = values.map((value) => t.text(value));
          return out.some((value, i) => value !== values[i])
            ? { ...r, completion: { ...r.completion, values: out } }
            : r;
        },
        tally,
      );
    default:
      return message;
  }
}

/** `messages[].content` of prompts and sampling requests. */
function messages(list: unknown, tally: Tally): unknown {
  if (!Array.isArray(list)) return list;
  const out = list.map((item) => (isObject(item) ? set(item, "content", tally.content(item.content)) : item));
  return out.some((item, i) => item !== list[i]) ? out : list;
}

/** What the server sends on its own: requests to the client and notifications. */
function scrubServerMessage(message: JsonRpcMessage, tally: Tally): JsonRpcMessage {
  switch (message.method) {
    case "sampling/createMessage":
      return withPart(
        message,
        "params",
        (p, t) => set(set(p, "messages", messages(p.messages, t)), "systemPrompt", t.text(p.systemPrompt)),
        tally,
      );
    case "elicitation/create":
      return withPart(message, "params", (p, t) => set(p, "message", t.text(p.message)), tally);
    case "notifications/message":
      return withPart(message, "params", (p, t) => set(p, "data", t.value(p.data)), tally);
    case "notifications/progress":
      return withPart(message, "params", (p, t) => set(p, "message", t.text(p.message)), tally);
    default:
      return message;
  }
}

/** The scrubbing inspectors for one request: one per direction. */
export function scrubInspectors(
  scrubbing: CompiledScrubbing,
  onScrubbed: ScrubListener,
): { request: MessageInspector; response: MessageInspector } {
  return {
    request: {
      name: "pii",
      inspect(record, message) {
        const tally = new Tally(scrubbing);
        const out = scrubRequest(message, tally);
        if (tally.limit !== undefined) return refuseUninspectable(record, tally.limit);
        if (!tally.changed) return KEEP;
        onScrubbed(
          record,
          "request",
          typeof message.method === "string" ? message.method : undefined,
          tally.counts,
        );
        return { action: "replace", message: out };
      },
    },
    response: {
      name: "pii",
      inspect(record, message) {
        const tally = new Tally(scrubbing);
        let method: string | undefined;
        let out: JsonRpcMessage;
        if (isJsonRpcResponse(message)) {
          method = requestAnswered(record, message.id)?.method as string | undefined;
          out = scrubAnswer(message, method, tally);
        } else {
          method = typeof message.method === "string" ? message.method : undefined;
          out = scrubServerMessage(message, tally);
        }
        if (tally.limit !== undefined) return refuseUninspectable(record, tally.limit);
        if (!tally.changed) return KEEP;
        onScrubbed(record, "response", method, tally.counts);
        return { action: "replace", message: out };
      },
    },
  };
}

function refuseUninspectable(record: RequestRecord, limit: LimitExceeded): InspectorVerdict {
  return {
    action: "refuse",
    error: new GatewayError(
      "uninspectable",
      `The message is too large for PII scrubbing to inspect (${limit.message}); it was not forwarded`,
      { server: record.server },
    ),
  };
}
