// A real MCP server (SDK McpServer, stateless Streamable HTTP) whose tools carry annotations and which offers
// prompts, resources and resource templates: everything RBAC decides on and filters. JSON or SSE answers.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { startStatelessSdkServer } from "../../support/stateless-sdk-server.ts";

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

export function startAnnotatedUpstream(options: { jsonResponse: boolean }): Promise<AnnotatedUpstream> {
  return startStatelessSdkServer(buildServer, options);
}
