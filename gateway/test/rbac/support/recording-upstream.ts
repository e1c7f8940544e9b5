// A real MCP server (SDK McpServer, stateless Streamable HTTP, JSON answers) with the conformance reference server's
// resources, resource template, subscriptions, prompts and completions, plus a private resource template whose
// variable completes: everything that names a capability. It records every JSON-RPC message it receives, so a test
// can tell that a refused request never reached it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { registerPrompts, registerResources } from "../../fixtures/reference-server/resources-and-prompts.ts";

export interface ReceivedMessage {
  method?: string;
  params?: Record<string, unknown>;
}

export interface RecordingUpstream {
  url: string;
  /** Every JSON-RPC message received, in order (a batch's messages one by one). */
  received: ReceivedMessage[];
  close(): Promise<void>;
}

function buildServer(): McpServer {
  const mcp = new McpServer(
    { name: "recording", version: "1.0.0" },
    { capabilities: { logging: {}, completions: {} } },
  );
  registerResources(mcp);
  registerPrompts(mcp);
  mcp.registerResource(
    "private-data",
    new ResourceTemplate("test://private/{id}", {
      list: undefined,
      complete: { id: (value) => ["alpha", "beta"].filter((id) => id.startsWith(value)) },
    }),
    { mimeType: "text/plain" },
    async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `private ${String(id)}` }] }),
  );
  return mcp;
}

export async function startRecordingUpstream(): Promise<RecordingUpstream> {
  const received: ReceivedMessage[] = [];
  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      let body: unknown;
      if (chunks.length > 0) {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        for (const message of Array.isArray(body) ? body : [body]) received.push(message as ReceivedMessage);
      }
      const server = buildServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      server
        .connect(transport)
        .then(() => transport.handleRequest(req, res, body))
        .catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(500).end(String(error));
        });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
