// A real MCP server (the SDK's McpServer behind its Streamable HTTP transport) on 127.0.0.1, used as the
// gateway's upstream in tests. Stateful (sessions, GET stream, DELETE) or stateless, JSON or SSE answers,
// optionally resumable (the SDK's InMemoryEventStore). Tools cover what the proxy must carry:
// echo, headers (what the upstream received), slow (sleeps), and gated (progress, then waits for the test).
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface UpstreamOptions {
  /** Answer POSTs with application/json instead of an SSE stream. */
  jsonResponse?: boolean;
  /** Sessions (Mcp-Session-Id, GET stream, DELETE); stateless otherwise. */
  stateful?: boolean;
  /** Keep events for resumption with Last-Event-ID. */
  resumable?: boolean;
  /** Answer every request with this HTTP status instead (e.g. 401). */
  forceStatus?: number;
}

/** Lets a test hold the `gated` tool after its progress notifications until it calls release(). */
export class Gate {
  #release: (() => void) | undefined;
  #waiting: Promise<void> = new Promise((resolve) => {
    this.#release = resolve;
  });
  entered = 0;
  wait(): Promise<void> {
    this.entered++;
    return this.#waiting;
  }
  release(): void {
    this.#release?.();
  }
}

export interface Upstream {
  url: string;
  gate: Gate;
  /** Sends a notification on every open session's standalone GET stream. */
  broadcast(message: string): Promise<void>;
  /** Request headers of the last MCP request the upstream received. */
  lastHeaders: () => Record<string, string | string[] | undefined>;
  /** Responses whose connection closed before they finished (the client, or the gateway, went away). */
  disconnects: () => number;
  /** Method and headers of every request received, in order. */
  requests: Array<{ method: string; headers: Record<string, string | string[] | undefined> }>;
  close(): Promise<void>;
}

function buildServer(gate: Gate): McpServer {
  const server = new McpServer(
    { name: "test-upstream", version: "1.0.0" },
    { capabilities: { logging: {} } },
  );
  server.registerTool("echo", { inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: "text", text }],
  }));
  server.registerTool("headers", {}, async (extra) => ({
    content: [{ type: "text" as const, text: JSON.stringify(extra.requestInfo?.headers ?? {}) }],
  }));
  server.registerTool("slow", { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: "text", text: "done" }] };
  });
  server.registerTool("gated", { inputSchema: { steps: z.number() } }, async ({ steps }, extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= steps; step++) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: step, total: steps },
        });
      }
    }
    await gate.wait();
    return { content: [{ type: "text", text: "released" }] };
  });
  // Closes its SSE stream after the first progress notification (2025-11-25 polling); the client must resume
  // with Last-Event-ID to get the result. Needs `resumable`.
  server.registerTool("polled", {}, async (extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: 1, total: 2 },
      });
    }
    extra.closeSSEStream?.();
    await gate.wait();
    return { content: [{ type: "text" as const, text: "resumed" }] };
  });
  server.registerResource("greeting", "test://greeting", {}, async () => ({
    contents: [{ uri: "test://greeting", text: "hello" }],
  }));
  return server;
}

export async function startUpstream(options: UpstreamOptions = {}): Promise<Upstream> {
  const gate = new Gate();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let lastHeaders: Record<string, string | string[] | undefined> = {};
  const requests: Upstream["requests"] = [];
  let disconnects = 0;
  const eventStore = options.resumable === true ? new InMemoryEventStore() : undefined;

  const newTransport = (): StreamableHTTPServerTransport =>
    new StreamableHTTPServerTransport({
      sessionIdGenerator: options.stateful === true ? () => randomUUID() : undefined,
      enableJsonResponse: options.jsonResponse === true,
      eventStore,
      retryInterval: eventStore === undefined ? undefined : 10,
      onsessioninitialized: (id) => {
        const entry = pending;
        if (entry !== undefined) sessions.set(id, entry);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
  let pending: { transport: StreamableHTTPServerTransport; server: McpServer } | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    lastHeaders = { ...req.headers };
    requests.push({ method: req.method ?? "", headers: lastHeaders });
    res.on("close", () => {
      if (!res.writableFinished) disconnects++;
    });
    if (options.forceStatus !== undefined) {
      res.writeHead(options.forceStatus, { "content-type": "application/json" }).end("{}");
      return;
    }
    if (options.stateful !== true) {
      const server = buildServer(gate);
      const transport = newTransport();
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (existing !== undefined) {
      await existing.transport.handleRequest(req, res);
      return;
    }
    if (sessionId !== undefined) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
      );
      return;
    }
    const server = buildServer(gate);
    const transport = newTransport();
    pending = { transport, server };
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    gate,
    lastHeaders: () => lastHeaders,
    requests,
    disconnects: () => disconnects,
    broadcast: async (message) => {
      for (const { server } of sessions.values()) {
        await server.server.sendLoggingMessage({ level: "info", data: message });
      }
    },
    close: async () => {
      gate.release();
      for (const { transport } of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
