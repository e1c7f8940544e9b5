// A real MCP server (SDK McpServer, stateful Streamable HTTP: sessions and the standalone GET stream) with one tool,
// `mutable`, whose annotations a test can change while clients are connected. Changing them goes through the SDK's
// RegisteredTool.update, which sends notifications/tools/list_changed on every session's GET stream, as a real
// server does when its tools change.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";

export interface ChangingUpstream {
  url: string;
  /** New annotations for `mutable`, in every open session and for sessions to come; each session is notified. */
  setAnnotations(annotations: ToolAnnotations): void;
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  tool: RegisteredTool;
}

export async function startChangingUpstream(initial: ToolAnnotations): Promise<ChangingUpstream> {
  let annotations = initial;
  const sessions = new Map<string, Session>();

  const newSession = (): Session => {
    const server = new McpServer(
      { name: "changing", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } } },
    );
    const tool = server.registerTool("mutable", { annotations }, async () => ({
      content: [{ type: "text" as const, text: "mutable ran" }],
    }));
    const session: Session = {
      server,
      tool,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, session);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      }),
    };
    return session;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const existing = sessions.get(sessionId);
      if (existing === undefined) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"unknown session"}');
        return;
      }
      await existing.transport.handleRequest(req, res);
      return;
    }
    const session = newSession();
    await session.server.connect(session.transport);
    await session.transport.handleRequest(req, res);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    setAnnotations(next) {
      annotations = next;
      for (const { tool } of sessions.values()) tool.update({ annotations: next });
    },
    close: async () => {
      for (const { transport } of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
