// The first response inspector: RBAC on what the upstream lists. A user sees in tools/list, prompts/list,
// resources/list and resources/templates/list exactly what they may call (one decision function, rbac/decide.ts).
// First, because no later inspector should spend work on items the user will not see. It also keeps the tool-hints
// cache current: tools/list results are learnt before filtering, notifications/tools/list_changed empties it.
import type { GatewayPolicy } from "../config/index.ts";
import type { Capability } from "../rbac/capability.ts";
import { decide, type ToolHints } from "../rbac/decide.ts";
import { filterListResult, isFilteredList } from "../rbac/filter-list.ts";
import type { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import { isJsonRpcRequest, isJsonRpcResponse, type JsonRpcMessage, rpcIdKey } from "../sse/json-rpc.ts";
import { KEEP, type MessageInspector } from "./inspector.ts";
import { type RequestRecord, requestAnswered } from "./request-record.ts";

const UNATTRIBUTED_LISTS = [
  "tools/list",
  "prompts/list",
  "resources/list",
  "resources/templates/list",
] as const;

/**
 * The inspector for one request, or undefined when it has nothing to do: no list request in the body (answers to
 * other requests carry no list) and not a GET stream (which may carry list_changed).
 */
export function rbacListInspector(
  record: RequestRecord,
  policy: GatewayPolicy,
  hints: ToolHintsCache,
): MessageInspector | undefined {
  const { route, principal } = record;
  if (route === undefined || principal === undefined) return undefined;
  const server = route.server;
  const lists = new Map<string, string>();
  for (const message of record.messages ?? []) {
    if (isJsonRpcRequest(message) && isFilteredList(message.method as string)) {
      lists.set(rpcIdKey(message.id), message.method as string);
    }
  }
  if (lists.size === 0 && record.httpMethod !== "GET") return undefined;
  const filtering = server.capability_rbac_enabled && (lists.size > 0 || record.httpMethod === "GET");
  const allowed = (capability: Capability, toolHints?: ToolHints) =>
    decide(server, policy, principal.groups, capability, toolHints).allowed;

  return {
    name: "rbac",
    inspect(_record, message: JsonRpcMessage) {
      if (message.method === "notifications/tools/list_changed") {
        hints.forget(server.name);
        return KEEP;
      }
      if (!isJsonRpcResponse(message) || message.result === undefined) return KEEP;
      const method = lists.get(rpcIdKey(message.id));
      // An answer of unknown request (a resumed stream replays earlier answers) is filtered as any list it holds.
      if (method === undefined && filtering && requestAnswered(record, message.id) === undefined) {
        let result: unknown = message.result;
        for (const list of UNATTRIBUTED_LISTS) result = filterListResult(list, result, allowed);
        return result === message.result ? KEEP : { action: "replace", message: { ...message, result } };
      }
      if (method === undefined || !isFilteredList(method)) return KEEP;
      if (method === "tools/list") hints.observe(server.name, message.result);
      if (!filtering) return KEEP;
      const result = filterListResult(method, message.result, allowed);
      return result === message.result ? KEEP : { action: "replace", message: { ...message, result } };
    },
  };
}
