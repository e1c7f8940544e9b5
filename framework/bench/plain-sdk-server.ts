// Baseline for `npm run bench:framework`: the MCP SDK alone (McpServer + its Node Streamable HTTP transport on
// node:http, stateful sessions) exposing the same echo tool as the framework-built server. It has no
// resumability (no event store), as in the SDK's minimal example; BENCH_EVENT_STORE=1 adds the SDK's example
// InMemoryEventStore, for a reference figure with resumability on both sides.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const transports = new Map<string, StreamableHTTPServerTransport>();
// One store shared by all sessions, like the framework's (the SDK's example store is unbounded).
const eventStore = process.env.BENCH_EVENT_STORE === "1" ? new InMemoryEventStore() : undefined;

function newServer(): McpServer {
  const server = new McpServer({ name: "plain-sdk", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes the text", inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const http = createServer(async (req, res) => {
  if (req.url !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  const sessionId = req.headers["mcp-session-id"];
  const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
  const body = req.method === "POST" ? await readBody(req) : undefined;
  if (existing) {
    await existing.handleRequest(req, res, body);
    return;
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    ...(eventStore ? { eventStore } : {}),
    onsessioninitialized: (id) => {
      transports.set(id, transport);
    },
  });
  await newServer().connect(transport);
  await transport.handleRequest(req, res, body);
});

http.listen(0, "127.0.0.1", () => {
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : 0;
  process.stdout.write(`${JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${port}` })}\n`);
});
process.once("SIGTERM", () => process.exit(0));
