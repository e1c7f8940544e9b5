// Pipeline step 5 (authorize): RBAC for the server and for each call. One decision function (rbac/decide.ts) answers
// here and in list filtering (inspect/rbac-list-inspector.ts), so what a user sees in a list is exactly what they
// may call.
import type { GatewayPolicy, ServerConfig } from "../config/index.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import type { Principal } from "../identity/principal.ts";
import { textProblem } from "../mcp/canonical-form.ts";
import { isKnownClientMessage } from "../mcp/methods.ts";
import { type Capability, capabilityKey, capabilityOfRequest } from "../rbac/capability.ts";
import { decide, type RbacDecision } from "../rbac/decide.ts";
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import { isJsonRpcRequest } from "../sse/json-rpc.ts";
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
