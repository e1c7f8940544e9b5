// A real MCP server (SDK McpServer, stateless Streamable HTTP) whose tools carry annotations and which offers
// prompts, resources and resource templates: everything RBAC decides on and filters. JSON or SSE answers.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface AnnotatedUpstream {
  url: string;
  close(): Promise<void>;
}

function buildServer(): McpServer {
  const server = new McpServer({ name: "annotated", version: "1.0.0" });
  const ok = (text: string) => async () => ({ content: [{ type: "text" as const, text }] });
  server.registerTool("read", { annotations: { readOnlyHint: true } }, ok("read"));
  server.registerTool("wipe", { annotations: { destructiveHint: true } }, ok("wiped"));
  server.registerTool("plain", {}, ok("plain"));
  server.registerTool("admin-tool", { annotations: { readOnlyHint: true } }, ok("admin"));
  for (const name of ["public-prompt", "secret-prompt"]) {
    server.registerPrompt(name, {}, () => ({
      messages: [{ role: "user" as const, content: { type: "text" as const, text: name } }],
    }));
  }
  for (const uri of ["file:///public.txt", "file:///secret.txt"]) {
    server.registerResource(uri, uri, {}, async () => ({ contents: [{ uri, text: uri }] }));
  }
  for (const template of ["file:///logs/{date}", "file:///private/{name}"]) {
    server.registerResource(
      template,
      new ResourceTemplate(template, { list: undefined }),
      {},
      async (uri) => ({ contents: [{ uri: uri.href, text: uri.href }] }),
    );
  }
  return server;
}

export async function startAnnotatedUpstream(options: { jsonResponse: boolean }): Promise<AnnotatedUpstream> {
  const http: Server = createServer((req, res) => {
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: options.jsonResponse,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
