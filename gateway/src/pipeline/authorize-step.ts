// Pipeline step 5 (authorize) and the RBAC half of step 8 (inspect response). One decision function (rbac/decide.ts)
// answers for the server, for each call and for each listed item, so what a user sees in a list is exactly what
// they may call.
import type { GatewayPolicy, ServerConfig } from "../config/index.ts";
import type { JsonRpcId } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import { type Capability, capabilityKey, capabilityOfRequest } from "../rbac/capability.ts";
import { decide, type RbacDecision } from "../rbac/decide.ts";
import { filterListResult, isFilteredList } from "../rbac/filter-list.ts";
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import type { SseEvent } from "../sse/sse-event.ts";

/** Told about every decision (for the audit trail when the server has rbac_audit). */
export type DecisionListener = (decision: RbacDecision, capability: Capability | undefined) => void;

/** Server level, right after authentication and before the body is read: 403 with a JSON body when refused. */
export function authorizeServer(
  server: ServerConfig,
  policy: GatewayPolicy,
  principal: Principal,
  onDecision?: DecisionListener,
): void {
  if (!server.rbac_enabled) return;
  const decision = decide(server, policy, principal.groups);
  onDecision?.(decision, undefined);
  if (!decision.allowed) {
    throw new GatewayError("forbidden", `Access to server '${server.name}' is not allowed for this user`, {
      server: server.name,
    });
  }
}

/**
 * Capability level, per parsed message: a tools/call, prompts/get or resources/read (subscribe, unsubscribe) the
 * caller may not use refuses the whole body with a JSON-RPC error (-32043, HTTP 200 so MCP clients surface it as
 * the call's error). Tools whose annotations the gateway has not seen are decided as destructive (closed).
 */
export function authorizeMessages(
  server: ServerConfig,
  policy: GatewayPolicy,
  principal: Principal,
  messages: readonly JsonRpcMessage[],
  hints: ToolHintsCache,
  onDecision?: DecisionListener,
): void {
  if (!server.capability_rbac_enabled) return;
  for (const message of messages) {
    if (!isJsonRpcRequest(message)) continue;
    const capability = capabilityOfRequest(message.method as string, message.params);
    if (capability === undefined) continue;
    const toolHints = capability.kind === "tools" ? hints.hintsFor(server.name, capability.name) : undefined;
    const decision = decide(server, policy, principal.groups, capability, toolHints);
    onDecision?.(decision, capability);
    if (!decision.allowed) {
      throw new GatewayError(
        "capability_forbidden",
        `${capabilityKey(capability)} is not allowed for this user`,
        {
          server: server.name,
        },
      );
    }
  }
}

const idKey = (id: JsonRpcId | undefined): string => (typeof id === "string" ? `s:${id}` : `n:${String(id)}`);

/**
 * Rewrites list results in the answer: built from the parsed request (which ids are list requests), applied to a
 * JSON answer as a whole and to an SSE answer event by event. Also feeds the tool-hints cache from tools/list
 * results (before filtering) and empties it on notifications/tools/list_changed.
 */
export interface ResponsePolicy {
  /** A JSON answer's bytes, rewritten when a list in it lost items; the same buffer otherwise. */
  json(bytes: Buffer): Buffer;
  sse(event: SseEvent, message: JsonRpcMessage | undefined): SseEvent | undefined;
}

export function responsePolicy(
  server: ServerConfig,
  policy: GatewayPolicy,
  principal: Principal,
  messages: readonly JsonRpcMessage[],
  hints: ToolHintsCache,
): ResponsePolicy | undefined {
  const lists = new Map<string, string>();
  for (const message of messages) {
    if (isJsonRpcRequest(message) && isFilteredList(message.method as string)) {
      lists.set(idKey(message.id), message.method as string);
    }
  }
  const filtering = server.capability_rbac_enabled && lists.size > 0;
  const learning = lists.size > 0 && [...lists.values()].includes("tools/list");
  const check = (capability: Capability, toolHints?: { readOnlyHint?: boolean; destructiveHint?: boolean }) =>
    decide(server, policy, principal.groups, capability, toolHints).allowed;

  /** The message with its list result filtered, or the same object when nothing changed. */
  const rewrite = (message: JsonRpcMessage): JsonRpcMessage => {
    if (message.method === "notifications/tools/list_changed") {
      hints.forget(server.name);
      return message;
    }
    if (!isJsonRpcResponse(message) || message.result === undefined) return message;
    const method = lists.get(idKey(message.id));
    if (method === undefined || !isFilteredList(method)) return message;
    if (method === "tools/list") hints.observe(server.name, message.result);
    if (!filtering) return message;
    const result = filterListResult(method, message.result, check);
    return result === message.result ? message : { ...message, result };
  };

  return {
    json(bytes) {
      if (!filtering && !learning) return bytes;
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString("utf8"));
      } catch {
        // Not JSON-RPC: nothing the caller could read a list from.
        return bytes;
      }
      if (Array.isArray(value)) {
        const out = value.map((item) =>
          typeof item === "object" && item !== null ? rewrite(item as JsonRpcMessage) : item,
        );
        return out.some((item, i) => item !== value[i]) ? Buffer.from(JSON.stringify(out)) : bytes;
      }
      if (typeof value !== "object" || value === null) return bytes;
      const out = rewrite(value as JsonRpcMessage);
      return out === value ? bytes : Buffer.from(JSON.stringify(out));
    },
    sse(event, message) {
      if (message === undefined) return event;
      const out = rewrite(message);
      if (out === message) return event;
      return { ...event, data: JSON.stringify(out).split("\n") };
    },
  };
}
