import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { SetLevelRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Catalog } from "./catalog.ts";
import { registerCompletionHandler } from "./handlers/completion.ts";
import { registerPromptHandlers } from "./handlers/prompts.ts";
import { registerResourceHandlers } from "./handlers/resources.ts";
import { registerToolHandlers } from "./handlers/tools.ts";
import { contextFactory, type SessionState } from "./request-context.ts";

export { buildCatalog, type Catalog } from "./catalog.ts";

/** A fresh low-level MCP Server for one session (or one stateless request), wired to the shared catalog. */
export function createMcpServer(catalog: Catalog): Server {
  const { settings, telemetry } = catalog;
  const server = new Server(
    { name: settings.name, version: settings.version },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        logging: {},
        completions: {},
      },
      ...(settings.description ? { instructions: settings.description } : {}),
    },
  );
  const state: SessionState = { logLevel: undefined, subscriptions: new Set() };
  const contextFor = contextFactory(server, telemetry, state);

  // Replaces the SDK's own handler: the level lives with this session's state, which ctx.log() consults.
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    state.logLevel = request.params.level;
    return {};
  });
  registerToolHandlers(server, catalog, contextFor);
  registerResourceHandlers(server, catalog, contextFor, state);
  registerPromptHandlers(server, catalog, contextFor);
  registerCompletionHandler(server, catalog);
  return server;
}
