import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

// A real MCP server (the SDK's McpServer, stateless Streamable HTTP) on 127.0.0.1: the upstream the gateway
// proxies to. Tool `add` proves a call went through; `calls` counts what reached it.

export interface Upstream {
  url: string;
  calls: number;
  close(): Promise<void>;
}

export async function startUpstream(name: string): Promise<Upstream> {
  const state = { calls: 0 };
  const server: Server = createServer(async (request, response) => {
    const mcp = new McpServer({ name, version: "1.0.0" });
    mcp.registerTool(
      "add",
      { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        state.calls += 1;
        return { content: [{ type: "text", text: `${name}: ${a + b}` }] };
      },
    );
    await serveStateless(mcp, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get calls() {
      return state.calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers one HTTP request with `mcp` on a transport of its own (the SDK's stateless pattern), closing both after. */
export async function serveStateless(
  mcp: McpServer,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on("close", () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(request, response);
}
