// Just enough JSON-RPC 2.0 to route, label and answer messages; the MCP SDK's schemas are not on the hot path.
import type { JsonRpcId } from "../errors/error-response.ts";

export interface JsonRpcMessage {
  jsonrpc?: unknown;
  id?: JsonRpcId;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: unknown;
}

/** A request expects an answer: it has a method and an id. */
export function isJsonRpcRequest(message: JsonRpcMessage): boolean {
  return typeof message.method === "string" && message.id !== undefined && message.id !== null;
}

/** A response answers a request: an id plus result or error. */
export function isJsonRpcResponse(message: JsonRpcMessage): boolean {
  return (
    message.id !== undefined && message.method === undefined && ("result" in message || "error" in message)
  );
}

/** A map key for a JSON-RPC id that keeps 1 and "1" apart (they are different ids). */
export function rpcIdKey(id: JsonRpcId | undefined): string {
  return typeof id === "string" ? `s:${id}` : `n:${String(id)}`;
}

function isMessage(value: unknown): value is JsonRpcMessage {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type ParsedBody =
  | { ok: true; batch: boolean; messages: JsonRpcMessage[] }
  | { ok: false; reason: "invalid_json" | "invalid_request"; message: string };

/** Parses a POST body into message(s); the text is kept by the caller and forwarded unchanged. */
export function parseJsonRpcBody(text: string): ParsedBody {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      reason: "invalid_json",
      message: `Request body is not valid JSON: ${(error as Error).message}`,
    };
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { ok: false, reason: "invalid_request", message: "Empty JSON-RPC batch" };
    if (!value.every(isMessage)) {
      return {
        ok: false,
        reason: "invalid_request",
        message: "Every JSON-RPC batch entry must be an object",
      };
    }
    return { ok: true, batch: true, messages: value };
  }
  if (!isMessage(value)) {
    return {
      ok: false,
      reason: "invalid_request",
      message: "Request body must be a JSON-RPC object or batch",
    };
  }
  return { ok: true, batch: false, messages: [value] };
}

/** Parses one SSE event's data as a JSON-RPC message; undefined for anything else (pings, priming events). */
export function parseJsonRpcEventData(data: string | undefined): JsonRpcMessage | undefined {
  if (data === undefined || data === "") return undefined;
  try {
    const value: unknown = JSON.parse(data);
    return isMessage(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
