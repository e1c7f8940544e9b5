// Which texts of an MCP message a model or a person will read, written once for every inspector that reads text (PII
// scrubbing, the prompt-injection firewall), so both look at the same places of the same messages, whatever the
// revision the client claims. Everything else (image and audio bytes, URIs, names, MIME types, requestState) is left
// alone: rewriting base64 would corrupt it, renaming a URI would break it.
//
// Up (client → upstream): the arguments of tools/call and prompts/get, the completion argument and its context; the
// user's answers, in the `inputResponses` of a retried request (2026-07-28 multi round-trip requests) and in the
// client's answers to a server's sampling and elicitation requests (2025-11-25).
// Down (upstream → client): results of tools/call (text and embedded-resource content, structuredContent),
// resources/read (text contents), prompts/get (description, messages) and completion/complete (values); the
// `inputRequests` of an `input_required` result (elicitation messages and requested schemas, sampling messages and
// system prompts); error messages and `data`; the server's own sampling and elicitation requests; notifications with
// text (log data, progress messages).
//
// An answer whose request the gateway cannot name (replayed on a resumed stream, or an error with id null) is read as
// any result could be: every result shape it holds, so nothing in it is skipped for want of its method.
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import { type RequestRecord, requestAnswered } from "./request-record.ts";

/** Where a text sits, for inspectors that read some sources and not others (the firewall's method lists). */
export type TextSource =
  /** A client's request arguments. */
  | "arguments"
  /** The user's answers: `inputResponses`, or a client's answer to a server request. */
  | "answers"
  /** A result's content. */
  | "result"
  /** An error's message and data. */
  | "error"
  /** A sampling request's messages and system prompt (a server request, or an input request). */
  | "sampling"
  /** An elicitation request's message and requested schema. */
  | "elicitation"
  /** Log data and progress messages. */
  | "notification";

export type TextDirection = "request" | "response";

/** What a message is about, as the inspectors need it. */
export interface MessageSubject {
  readonly direction: TextDirection;
  /**
   * The message's own method (a request or notification), or the method of the request an answer answers; undefined
   * for an answer whose request is unknown, and for a client's answer to a server request.
   */
  readonly method: string | undefined;
  /** The tool a tools/call (or its answer) names. */
  readonly tool: string | undefined;
  /** An answer (upstream → client) whose request the gateway cannot name: every result shape is read. */
  readonly unattributed: boolean;
}

export interface TextEditor {
  /** Whether this source of text is read at all. */
  reads(source: TextSource): boolean;
  /** One string a model or a person reads; returns what replaces it (the same string when unchanged). */
  text(value: string, source: TextSource): string;
  /** A JSON value (arguments, structured content, form data, log data, error data); returns what replaces it. */
  value(value: unknown, source: TextSource): unknown;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The subject of one message travelling in `direction`, its answered request looked up in the record. */
export function subjectOf(
  record: RequestRecord,
  message: JsonRpcMessage,
  direction: TextDirection,
): MessageSubject {
  if (isJsonRpcResponse(message)) {
    if (direction === "request") {
      return { direction, method: undefined, tool: undefined, unattributed: false };
    }
    const request = requestAnswered(record, message.id);
    if (request === undefined) return { direction, method: undefined, tool: undefined, unattributed: true };
    return { direction, method: request.method as string, tool: toolOf(request), unattributed: false };
  }
  const method = typeof message.method === "string" ? message.method : undefined;
  return { direction, method, tool: toolOf(message), unattributed: false };
}

function toolOf(request: JsonRpcMessage): string | undefined {
  if (request.method !== "tools/call" || !isObject(request.params)) return undefined;
  return typeof request.params.name === "string" ? request.params.name : undefined;
}

/**
 * The message with every text the subject says it carries passed through `editor`: the very same message when
 * nothing was replaced (so an unchanged message is never serialised again).
 */
export function editTexts(
  message: JsonRpcMessage,
  subject: MessageSubject,
  editor: TextEditor,
): JsonRpcMessage {
  const walk = new Walk(editor);
  if (subject.direction === "request") {
    if (isJsonRpcResponse(message)) return part(message, "result", (r) => walk.answer(r));
    if (!isJsonRpcRequest(message)) return message;
    return part(message, "params", (p) => walk.requestParams(p, subject.method));
  }
  if (isJsonRpcResponse(message)) {
    let out = part(message, "error", (e) => walk.error(e));
    out = part(out, "result", (r) => walk.result(r, subject));
    return out;
  }
  return part(message, "params", (p) => walk.serverMessage(p, subject.method));
}

/** `message[name]` replaced by `edit(message[name])` when that is an object; the same message when unchanged. */
function part(message: JsonRpcMessage, name: "params" | "result" | "error", edit: (value: Json) => Json) {
  const value = message[name];
  if (!isObject(value)) return message;
  const out = edit(value);
  return out === value ? message : { ...message, [name]: out };
}

/** `object` with one field set; the same object when the value is unchanged. */
function set(object: Json, name: string, value: unknown): Json {
  return value === object[name] ? object : { ...object, [name]: value };
}

function mapArray(list: unknown, edit: (item: unknown) => unknown): unknown {
  if (!Array.isArray(list)) return list;
  let copy: unknown[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    const out = edit(item);
    if (out !== item) {
      copy ??= list.slice();
      copy[i] = out;
    }
  }
  return copy ?? list;
}

/** Each value of a map (`inputRequests`, `inputResponses`) through `edit`; the same object when unchanged. */
function mapValues(map: Json, edit: (value: unknown) => unknown): Json {
  let copy: Json | undefined;
  for (const [key, value] of Object.entries(map)) {
    const out = edit(value);
    if (out !== value) {
      copy ??= { ...map };
      Object.defineProperty(copy, key, { value: out, enumerable: true, writable: true, configurable: true });
    }
  }
  return copy ?? map;
}

/** One message's walk over its texts. */
class Walk {
  readonly #editor: TextEditor;

  constructor(editor: TextEditor) {
    this.#editor = editor;
  }

  #text(value: unknown, source: TextSource): unknown {
    return typeof value === "string" && value !== "" ? this.#editor.text(value, source) : value;
  }

  #value(value: unknown, source: TextSource): unknown {
    return value === undefined ? value : this.#editor.value(value, source);
  }

  /** Content blocks (one or a list): text and embedded text resources; images, audio, blobs and links are not text. */
  content(block: unknown, source: TextSource): unknown {
    if (Array.isArray(block)) return mapArray(block, (item) => this.content(item, source));
    if (!isObject(block)) return block;
    if (block.type === "text") return set(block, "text", this.#text(block.text, source));
    if (block.type === "resource" && isObject(block.resource)) {
      return set(block, "resource", this.resourceContents(block.resource, source));
    }
    return block;
  }

  resourceContents(contents: unknown, source: TextSource): unknown {
    return isObject(contents) ? set(contents, "text", this.#text(contents.text, source)) : contents;
  }

  /** `messages[].content` of prompts and sampling requests. */
  messages(list: unknown, source: TextSource): unknown {
    return mapArray(list, (item) =>
      isObject(item) ? set(item, "content", this.content(item.content, source)) : item,
    );
  }

  requestParams(params: Json, method: string | undefined): Json {
    let out = params;
    if (this.#editor.reads("arguments")) {
      if (method === "tools/call" || method === "prompts/get") {
        out = set(out, "arguments", this.#value(out.arguments, "arguments"));
      } else if (method === "completion/complete") {
        if (isObject(out.argument))
          out = set(out, "argument", set(out.argument, "value", this.#text(out.argument.value, "arguments")));
        if (isObject(out.context))
          out = set(
            out,
            "context",
            set(out.context, "arguments", this.#value(out.context.arguments, "arguments")),
          );
      }
    }
    // A retried request carries the user's answers to the server's input requests, whatever its method.
    if (isObject(out.inputResponses) && this.#editor.reads("answers")) {
      out = set(
        out,
        "inputResponses",
        mapValues(out.inputResponses, (answer) => (isObject(answer) ? this.answer(answer) : answer)),
      );
    }
    return out;
  }

  /** The client's answer to a server request: form data of an elicitation, content of a sampling result. */
  answer(result: Json): Json {
    if (!this.#editor.reads("answers")) return result;
    if (typeof result.action === "string")
      return set(result, "content", this.#value(result.content, "answers"));
    return result.content === undefined
      ? result
      : set(result, "content", this.content(result.content, "answers"));
  }

  error(error: Json): Json {
    if (!this.#editor.reads("error")) return error;
    return set(
      set(error, "message", this.#text(error.message, "error")),
      "data",
      this.#value(error.data, "error"),
    );
  }

  result(result: Json, subject: MessageSubject): Json {
    let out = result;
    // An input_required result (any method may carry one): the server's questions to the user and its model.
    if (isObject(out.inputRequests)) {
      out = set(
        out,
        "inputRequests",
        mapValues(out.inputRequests, (request) => this.inputRequest(request)),
      );
    }
    if (!this.#editor.reads("result")) return out;
    const method = subject.method;
    const any = subject.unattributed;
    if (any || method === "tools/call") {
      out = set(out, "content", this.content(out.content, "result"));
      out = set(out, "structuredContent", this.#value(out.structuredContent, "result"));
    }
    if (any || method === "resources/read") {
      out = set(
        out,
        "contents",
        mapArray(out.contents, (item) => this.resourceContents(item, "result")),
      );
    }
    if (any || method === "prompts/get") {
      out = set(out, "description", this.#text(out.description, "result"));
      out = set(out, "messages", this.messages(out.messages, "result"));
    }
    if ((any || method === "completion/complete") && isObject(out.completion)) {
      out = set(
        out,
        "completion",
        set(
          out.completion,
          "values",
          mapArray(out.completion.values, (value) => this.#text(value, "result")),
        ),
      );
    }
    return out;
  }

  inputRequest(request: unknown): unknown {
    if (!isObject(request)) return request;
    return part(request as JsonRpcMessage, "params", (p) =>
      this.serverMessage(p, request.method as string | undefined),
    );
  }

  /** What a server sends on its own (requests to the client, notifications), and the input requests of MRTR. */
  serverMessage(params: Json, method: string | undefined): Json {
    switch (method) {
      case "sampling/createMessage":
        if (!this.#editor.reads("sampling")) return params;
        return set(
          set(params, "messages", this.messages(params.messages, "sampling")),
          "systemPrompt",
          this.#text(params.systemPrompt, "sampling"),
        );
      case "elicitation/create":
        if (!this.#editor.reads("elicitation")) return params;
        return set(
          set(params, "message", this.#text(params.message, "elicitation")),
          "requestedSchema",
          this.#value(params.requestedSchema, "elicitation"),
        );
      case "notifications/message":
        return this.#editor.reads("notification")
          ? set(params, "data", this.#value(params.data, "notification"))
          : params;
      case "notifications/progress":
        return this.#editor.reads("notification")
          ? set(params, "message", this.#text(params.message, "notification"))
          : params;
      default:
        return params;
    }
  }
}
