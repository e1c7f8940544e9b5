// One instance of a stateful MCP server (the SDK's McpServer and Streamable HTTP transport, one transport per
// session), in its own process so a test can kill it. Its serverInfo name and its `whoami` tool answer the instance's
// label (argv[2]); GET /counts answers the calls it served per session id. Prints {"url": …} as one JSON line.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";

const label = process.argv[2] ?? "instance";
const transports = new Map<string, StreamableHTTPServerTransport>();
const calls = new Map<string, number>();

function newSession(): StreamableHTTPServerTransport {
  const server = new McpServer({ name: label, version: "1.0.0" });
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: true,
    onsessioninitialized: (id) => {
      transports.set(id, transport);
    },
  });
  server.registerTool("whoami", {}, async (extra) => {
    const id = extra.sessionId ?? "";
    calls.set(id, (calls.get(id) ?? 0) + 1);
    return { content: [{ type: "text", text: label }] };
  });
  void server.connect(transport);
  return transport;
}

const http = createServer(async (req, res) => {
  if (req.method === "GET" && req.url === "/counts") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(Object.fromEntries(calls)));
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  const sessionId = req.headers["mcp-session-id"];
  const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
  if (existing !== undefined) return existing.handleRequest(req, res, body);
  if (sessionId === undefined && isInitializeRequest(body)) return newSession().handleRequest(req, res, body);
  res.writeHead(404, { "content-type": "application/json" });
  res.end(
    JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } }),
  );
});
http.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ url: `http://127.0.0.1:${(http.address() as AddressInfo).port}` })}\n`,
  );
});
