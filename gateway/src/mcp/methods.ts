// The MCP methods a client may send to a server: the union of the 2025-03-26, 2025-06-18 and 2025-11-25 revisions
// (2024-11-05 has a subset of them). One list for everything that needs to know them: metric labels, and capability
// RBAC, which refuses what it does not know. Only the client → server direction: the gateway relays POST bodies from
// clients. Sampling (`sampling/createMessage`), elicitation (`elicitation/create`), `roots/list` and the server's
// notifications travel server → client, and the client's answers to them are responses, which carry no method.

/** Requests (they carry an id and expect an answer). */
const CLIENT_REQUESTS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  // 2025-11-25: tasks. Either side may be the receiver of a task, so a client may ask the server about its tasks.
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
]);

/** Notifications (no id, never answered). */
const CLIENT_NOTIFICATIONS: ReadonlySet<string> = new Set([
  "notifications/initialized",
  "notifications/cancelled",
  "notifications/progress",
  "notifications/roots/list_changed",
  // 2025-11-25: a task receiver reports its task's status; the client is one when the server hands it a task.
  "notifications/tasks/status",
]);

/** A method a client sends to a server in some supported revision, as a request or as a notification. */
export function isClientMethod(method: string): boolean {
  return CLIENT_REQUESTS.has(method) || CLIENT_NOTIFICATIONS.has(method);
}

/**
 * Whether `method` is one the client may send in this role: a request method sent as a notification (or the other
 * way round) is not a message any revision defines, so it is not known either.
 */
export function isKnownClientMessage(method: string, asRequest: boolean): boolean {
  return asRequest ? CLIENT_REQUESTS.has(method) : CLIENT_NOTIFICATIONS.has(method);
}
