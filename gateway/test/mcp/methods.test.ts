import {
  ClientNotificationSchema,
  ClientRequestSchema,
  ServerNotificationSchema,
  ServerRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { expect, test } from "vitest";
import { isClientMethod, isKnownClientMessage } from "../../src/mcp/methods.ts";
import { methodLabel } from "../../src/runtime/metrics.ts";

// The gateway's list of MCP client methods against the MCP SDK's own schemas (the SDK speaks 2025-11-25 and every
// earlier revision, whose client methods are a subset): capability RBAC refuses what is not on the list, so a
// method missing here would be refused for every client, and a server-side one listed here would be let through.

const methodsOf = (union: { options: ReadonlyArray<{ shape: { method: { value: string } } }> }) =>
  union.options.map((option) => option.shape.method.value);

const requests = methodsOf(ClientRequestSchema);
const notifications = methodsOf(ClientNotificationSchema);

test("every client request and notification of the SDK is known, each only in its role, and labelled as itself", () => {
  for (const method of requests) {
    expect([method, isKnownClientMessage(method, true), isKnownClientMessage(method, false)]).toEqual([
      method,
      true,
      false,
    ]);
    expect(methodLabel(method)).toBe(method);
  }
  for (const method of notifications) {
    expect([method, isKnownClientMessage(method, false), isKnownClientMessage(method, true)]).toEqual([
      method,
      true,
      false,
    ]);
    expect(methodLabel(method)).toBe(method);
  }
});

test("methods only a server sends are not client methods", () => {
  const serverOnly = [...methodsOf(ServerRequestSchema), ...methodsOf(ServerNotificationSchema)].filter(
    (method) => !requests.includes(method) && !notifications.includes(method),
  );
  expect(serverOnly).toEqual(
    expect.arrayContaining([
      "sampling/createMessage",
      "elicitation/create",
      "roots/list",
      "notifications/message",
    ]),
  );
  for (const method of serverOnly) expect([method, isClientMethod(method)]).toEqual([method, false]);
});
