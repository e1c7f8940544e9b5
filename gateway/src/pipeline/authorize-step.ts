// Pipeline step 5 (authorize) and the RBAC half of step 8 (inspect response). One decision function (rbac/decide.ts)
// answers for the server, for each call and for each listed item, so what a user sees in a list is exactly what
// they may call.
import type { GatewayPolicy, ServerConfig } from "../config/index.ts";
import type { JsonRpcId } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import { isKnownClientMessage } from "../mcp/methods.ts";
import { textProblem } from "../rbac/canonical-form.ts";
import { type Capability, capabilityKey, capabilityOfRequest } from "../rbac/capability.ts";
import { decide, type RbacDecision } from "../rbac/decide.ts";
import { filterListResult, isFilteredList } from "../rbac/filter-list.ts";
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage } from "../sse/json-rpc.ts";
import type { SseEvent } from "../sse/sse-event.ts";
import type { ParsedRequest } from "./parse-request.ts";

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
 * Capability level, per parsed message; returns the capability of a single-message body (for the audit record).
 * - Every method that names a capability (rbac/capability.ts) has the name checked whatever RBAC says: a name or URI
 *   with control or format characters, white space at an end or broken percent-encoding refuses the whole body as
 *   invalid params (-32602, HTTP 200).
 * - With capability RBAC on (closed): a method the gateway does not know (mcp/methods.ts), also a request method sent
 *   as a notification, refuses the body (-32601); so does a known method whose capability param is missing or not a
 *   string (-32602); and a capability the caller may not use under some reading of its name refuses it with -32043
 *   (HTTP 200, so MCP clients surface it as the call's error). Tools whose annotations the gateway has not seen are
 *   decided as destructive (closed). Nothing refused reaches the upstream; what is forwarded is the body as sent.
 */
export function authorizeMessages(
  server: ServerConfig,
  policy: GatewayPolicy,
  principal: Principal,
  parsed: Pick<ParsedRequest, "messages" | "batch" | "requestIds">,
  hints: ToolHintsCache,
  onDecision?: DecisionListener,
): Capability | undefined {
  const closed = server.capability_rbac_enabled;
  let single: Capability | undefined;
  for (const message of parsed.messages) {
    if (!("method" in message)) continue; // a response (to a server's request): no method, nothing to decide
    const asRequest = isJsonRpcRequest(message);
    if (closed) refuseUnknownMethod(message.method, asRequest, parsed.requestIds.length > 0, server.name);
    if (!asRequest) continue;
    const named = capabilityOfRequest(message.method as string, message.params);
    if (named.status === "none") continue;
    if (named.status === "missing") {
      if (closed) throw new GatewayError("invalid_params", named.problem, { server: server.name });
      continue;
    }
    const { capability, field } = named;
    const problem = textProblem(field, capability.name, capability.kind);
    if (problem !== undefined) {
      throw new GatewayError("invalid_params", `${message.method as string}: ${problem}`, {
        server: server.name,
      });
    }
    if (!parsed.batch) single = capability;
    if (!closed) continue;
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
  return single;
}

/** Closed: only the MCP methods a client sends, each in its role (request or notification). */
function refuseUnknownMethod(
  method: unknown,
  asRequest: boolean,
  bodyHasRequests: boolean,
  server: string,
): void {
  if (typeof method === "string" && isKnownClientMessage(method, asRequest)) return;
  const what =
    typeof method !== "string"
      ? "A message whose method is not a string"
      : `${asRequest ? "Request" : "Notification"} method '${method.slice(0, 100)}' is not an MCP client method and`;
  throw new GatewayError(
    bodyHasRequests ? "unknown_method" : "unknown_notification",
    `${what} is not forwarded: capability RBAC is on for server '${server}'`,
    { server },
  );
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
