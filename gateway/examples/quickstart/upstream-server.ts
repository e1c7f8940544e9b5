// The quick start's upstream: a small MCP server built with the MCP SDK, served over Streamable HTTP on
// loopback, with sessions. Three tools: `echo`, `add`, and `countdown`, which streams progress notifications
// (watch them arrive one by one through the gateway).
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

function exampleServer(): McpServer {
  const server = new McpServer({ name: "svc-quickstart", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Returns the text it is given", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  server.registerTool(
    "countdown",
    {
      description: "Counts down from n, one progress notification per second",
      inputSchema: { n: z.number().int().min(1).max(30) },
    },
    async ({ n }, extra) => {
      for (let left = n; left > 0; left--) {
        const token = extra._meta?.progressToken;
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: n - left + 1, total: n, message: `${left}…` },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      return { content: [{ type: "text", text: "liftoff" }] };
    },
  );
  return server;
}

/** Starts the example server on 127.0.0.1 (port 0 = any free port); resolves with its MCP URL. */
export async function startExampleUpstream(port = 0): Promise<{ url: string; server: Server }> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    if (!req.url?.startsWith("/mcp")) {
      res.writeHead(404).end();
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport = created;
      await exampleServer().connect(created);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, server: http };
}
