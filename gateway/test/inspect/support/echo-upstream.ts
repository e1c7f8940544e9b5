// A real MCP SDK server that shows what it received: its tools return their arguments, so a test sees both what the
// upstream got (recorded here) and what the client got back. `leak` returns personal data the upstream itself
// produces, to test the way down on its own. Stateless, JSON or SSE answers; `echo_progress` sends progress
// notifications carrying the text before its result, so SSE events of several kinds interleave.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { startStatelessSdkServer } from "../../support/stateless-sdk-server.ts";

export interface EchoUpstream {
  url: string;
  /** Arguments of every tools/call received, in order. */
  received: unknown[];
  close(): Promise<void>;
}

/** Personal data the `leak` tool returns in text, in structured content and in an embedded resource. */
export const LEAKED = {
  text: "Reach the customer at carol.smith@example.org or +1 212-555-0143.",
  structured: { customer: { email: "carol.smith@example.org", card: "4111 1111 1111 1111" } },
  resourceText: "SSN on file: 536-22-8841",
  /** Valid base64 that a recognizer would take for a card number if it scanned image bytes (it must not). */
  imageData: "4111111111111111",
};

function buildServer(received: unknown[]): McpServer {
  const server = new McpServer({ name: "echo-upstream", version: "1.0.0" });
  server.registerTool(
    "echo",
    { inputSchema: { text: z.string(), extra: z.record(z.string(), z.unknown()).optional() } },
    async (args) => {
      received.push(args);
      return { content: [{ type: "text", text: args.text }], structuredContent: { echoed: args } };
    },
  );
  server.registerTool("echo_progress", { inputSchema: { text: z.string() } }, async (args, extra) => {
    received.push(args);
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      for (let progress = 1; progress <= 2; progress++) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 2, message: `working on ${args.text}` },
        });
      }
    }
    return { content: [{ type: "text", text: args.text }] };
  });
  server.registerTool("leak", {}, async () => ({
    content: [
      { type: "text", text: LEAKED.text },
      {
        type: "resource",
        resource: { uri: "file:///customer.txt", mimeType: "text/plain", text: LEAKED.resourceText },
      },
      { type: "image", data: LEAKED.imageData, mimeType: "image/png" },
    ],
    structuredContent: LEAKED.structured,
  }));
  return server;
}

export async function startEchoUpstream(options: { json?: boolean } = {}): Promise<EchoUpstream> {
  const received: unknown[] = [];
  const server = await startStatelessSdkServer(() => buildServer(received), {
    jsonResponse: options.json === true,
  });
  return { ...server, received };
}
