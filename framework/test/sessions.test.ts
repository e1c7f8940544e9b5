// The session endpoint in process (no build): the open-session limit.

import { initializeRequest } from "svc-testkit/json-rpc";
import { afterAll, describe, expect, it } from "vitest";
import { defineTool } from "../src/define/tool.ts";
import { parseSettings } from "../src/project/settings.ts";
import { buildCatalog } from "../src/runtime/mcp-server.ts";
import { loadRegistry } from "../src/runtime/registry.ts";
import { createMcpEndpoint } from "../src/runtime/sessions.ts";
import { startTelemetry } from "../src/runtime/telemetry.ts";

const settings = parseSettings({ name: "limits" });
const { registry } = await loadRegistry([
  {
    kind: "tool",
    file: "tools/t.ts",
    defaultName: "t",
    load: async () => ({ default: defineTool({ description: "t", handler: () => "t" }) }),
  },
]);
const endpoint = createMcpEndpoint(
  buildCatalog(settings, registry, await startTelemetry(settings, {}, () => {})),
  {
    maxSessions: 2,
  },
);

const initialize = () =>
  endpoint.handle(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initializeRequest()),
    }),
    undefined,
  );

afterAll(() => endpoint.close());

describe("open sessions", () => {
  it("refuses a new session beyond the limit with 503", async () => {
    for (const _ of [1, 2]) {
      const response = await initialize();
      expect(response.status).toBe(200);
      await response.body?.cancel();
    }
    expect(endpoint.sessionCount).toBe(2);
    const refused = await initialize();
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { message: "Too many open sessions; retry later" } });
  });
});
