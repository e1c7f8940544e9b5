// A vendor's MCP server in the upstream-OAuth tests: the SDK's McpServer (stateless Streamable HTTP) behind a bearer
// check of the vendor's own tokens (its JWKS, its issuer, its own URL as audience). Without a valid token it answers
// 401 with a challenge naming its RFC 9728 metadata, which names the vendor's authorization server. Its one tool,
// `whoami`, answers with the subject of the vendor token it was called with.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createRemoteJWKSet, jwtVerify } from "jose";

export interface VendorMcpServer {
  /** Its MCP endpoint: the gateway's server url, and the resource its tokens are for. */
  mcpUrl: string;
  close(): Promise<void>;
}

export async function startVendorMcpServer(vendor: {
  issuer: string;
  jwksUri: string;
}): Promise<VendorMcpServer> {
  const jwks = createRemoteJWKSet(new URL(vendor.jwksUri));
  let mcpUrl = "";
  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const origin = new URL(mcpUrl).origin;
    if (request.url?.startsWith("/.well-known/oauth-protected-resource") === true) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          resource: mcpUrl,
          authorization_servers: [vendor.issuer],
          scopes_supported: ["mcp:tools"],
        }),
      );
      return;
    }
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    let subject: string | undefined;
    if (token !== undefined) {
      try {
        const { payload } = await jwtVerify(token, jwks, { issuer: vendor.issuer, audience: mcpUrl });
        subject = payload.sub;
      } catch {
        subject = undefined;
      }
    }
    if (subject === undefined) {
      response.writeHead(401, {
        "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"${token === undefined ? "" : ', error="invalid_token"'}`,
      });
      response.end();
      return;
    }
    const mcp = new McpServer({ name: "vendor-mcp", version: "1.0.0" });
    mcp.registerTool("whoami", { description: "The vendor account this call runs as" }, async () => ({
      content: [{ type: "text", text: subject }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    response.on("close", () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(request, response);
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  mcpUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    mcpUrl,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
