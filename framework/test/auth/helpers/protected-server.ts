import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { getApiKey, getAuthToken } from "../../../src/auth/index.ts";
import { type AuthLayer, createAuthLayer } from "../../../src/auth/runtime.ts";

// A small Hono app with a real MCP SDK server behind the auth layer, as the framework runtime mounts it.

export interface ProtectedServer {
  url: string;
  mcpUrl: string;
  layer: AuthLayer;
  dataDir: string;
  close(): Promise<void>;
}

/** What the `whoami` tool reports: what tools see through svc/auth and the SDK's authInfo. */
export interface Whoami {
  token?: string;
  apiKey?: string;
  clientId?: string;
  scopes?: string[];
}

function mcpServer(): McpServer {
  const server = new McpServer({ name: "auth-test", version: "1.0.0" });
  server.registerTool("whoami", { description: "Reports the caller as the tool sees it" }, async (extra) => {
    const whoami: Whoami = {
      ...(getAuthToken() ? { token: getAuthToken() } : {}),
      ...(getApiKey() ? { apiKey: getApiKey() } : {}),
      ...(extra.authInfo ? { clientId: extra.authInfo.clientId, scopes: extra.authInfo.scopes } : {}),
    };
    return { content: [{ type: "text", text: JSON.stringify(whoami) }] };
  });
  return server;
}

/** Starts the app on 127.0.0.1; the auth layer is built from what the test configured (configureAuth...). */
export async function startProtectedServer(
  options: { env?: Record<string, string | undefined>; dataDir?: string } = {},
): Promise<ProtectedServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "svc-auth-")));
  const app = new Hono();
  const httpServer = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise<void>((resolve) => httpServer.once("listening", () => resolve()));
  const url = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  const close = async () => {
    await new Promise<void>((resolve) => {
      if ("closeAllConnections" in httpServer) httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    });
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
  };
  let layer: AuthLayer;
  try {
    layer = await createAuthLayer({ publicUrl: url, env: options.env ?? {}, dataDir });
  } catch (error) {
    await close();
    throw error;
  }
  layer.install(app);
  app.use("/mcp", layer.guard);
  app.all("/mcp", async (c) => {
    // Stateless: a fresh server and transport per request.
    const server = mcpServer();
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    const authInfo = c.get("authInfo");
    return transport.handleRequest(c.req.raw, authInfo ? { authInfo } : undefined);
  });
  return { url, mcpUrl: `${url}/mcp`, layer, dataDir, close };
}

/** Calls `whoami` with an MCP SDK client sending `headers`. */
export async function callWhoami(mcpUrl: string, headers: Record<string, string> = {}): Promise<Whoami> {
  const client = new Client({ name: "auth-test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers } });
  await client.connect(transport);
  try {
    const result = await client.callTool({ name: "whoami", arguments: {} });
    const content = result.content as Array<{ type: string; text: string }>;
    return JSON.parse(content[0]?.text ?? "{}") as Whoami;
  } finally {
    await client.close();
  }
}

/** A raw initialize POST to /mcp, for asserting status codes and challenges. */
export function postInitialize(mcpUrl: string, headers: Record<string, string> = {}): Promise<Response> {
  return postJsonRpc(mcpUrl, initializeRequest(), headers);
}
