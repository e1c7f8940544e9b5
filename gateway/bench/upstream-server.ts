// The bench's upstream: a stateless MCP server built with the SDK, an `echo` tool and a `report` tool (its text four
// times over: a 1 KB argument becomes a 4 KB result, the scrubbing scenario's shape), answering
//   /json/mcp  with a JSON response (enableJsonResponse)
//   /sse/mcp   with an SSE stream carrying the result
// Stateless (no session), so every request is one self-contained tools/call, the same work on every path.
// Run as its own process: prints {"msg":"listening","url":"http://127.0.0.1:<port>"}.
import type { IncomingMessage, ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { readBody, serveUpstream } from "./serve-upstream.ts";

const echoInput = { text: z.string() };

function buildServer(): McpServer {
  const mcp = new McpServer({ name: "svc-bench-upstream", version: "1.0.0" });
  mcp.registerTool(
    "echo",
    { description: "Returns its text argument", inputSchema: echoInput },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  mcp.registerTool(
    "report",
    { description: "Returns its text argument four times over", inputSchema: echoInput },
    async ({ text }) => ({ content: [{ type: "text", text: `${text}\n${text}\n${text}\n${text}` }] }),
  );
  return mcp;
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = req.url ?? "";
  const json = path === "/json/mcp";
  if (!json && path !== "/sse/mcp") {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  // The SDK's stateless pattern: a fresh server and transport per request.
  const mcp = buildServer();
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: json,
  });
  res.on("close", () => {
    transport.close();
    mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, JSON.parse(await readBody(req)));
}

await serveUpstream(handle);
