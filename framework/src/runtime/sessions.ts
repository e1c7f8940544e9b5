import { randomUUID } from "node:crypto";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { MemoryEventStore } from "./event-store.ts";
import { type Catalog, createMcpServer } from "./mcp-server.ts";

/** A session with no request for this long is closed (README "Limits"). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Open sessions per process; a new session beyond this is refused with 503 until others end or expire. */
export const MAX_SESSIONS = 10_000;
/** Suggested client reconnection delay for SSE polling (the `retry` field of priming events). */
export const SSE_RETRY_MS = 1000;

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  /** The client the session was opened by; another client's token cannot use it. */
  owner: string | undefined;
  lastSeen: number;
}

export interface McpEndpoint {
  handle(request: Request, authInfo: AuthInfo | undefined, parsedBody?: unknown): Promise<Response>;
  readonly sessionCount: number;
  close(): Promise<void>;
}

function rpcError(status: number, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function options(authInfo: AuthInfo | undefined, parsedBody: unknown) {
  return { ...(authInfo ? { authInfo } : {}), ...(parsedBody !== undefined ? { parsedBody } : {}) };
}

/** Stateless mode: a fresh server and transport per request, no session id, nothing kept. */
function statelessEndpoint(catalog: Catalog): McpEndpoint {
  return {
    async handle(request, authInfo, parsedBody) {
      if (request.method !== "POST")
        return rpcError(405, -32000, "Method not allowed in stateless mode: use POST");
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await createMcpServer(catalog).connect(transport);
      return transport.handleRequest(request, options(authInfo, parsedBody));
    },
    sessionCount: 0,
    async close() {},
  };
}

/** Stateful mode: sessions keyed by Mcp-Session-Id, resumable through an in-memory event store. */
function sessionEndpoint(catalog: Catalog, maxSessions: number): McpEndpoint {
  const sessions = new Map<string, Session>();
  const eventStore = new MemoryEventStore();
  const sweep = setInterval(() => {
    const cutoff = Date.now() - SESSION_IDLE_MS;
    for (const [id, session] of sessions) {
      if (session.lastSeen < cutoff) {
        sessions.delete(id);
        void session.transport.close();
      }
    }
  }, 60_000);
  sweep.unref();

  return {
    async handle(request, authInfo, parsedBody) {
      const sessionId = request.headers.get("mcp-session-id");
      const owner = authInfo?.clientId;
      if (sessionId) {
        const session = sessions.get(sessionId);
        // Unknown and foreign sessions look the same, so ids cannot be probed.
        if (!session || session.owner !== owner) return rpcError(404, -32001, "Session not found");
        session.lastSeen = Date.now();
        return session.transport.handleRequest(request, options(authInfo, parsedBody));
      }
      if (request.method !== "POST")
        return rpcError(400, -32000, "Bad Request: Mcp-Session-Id header is required");
      if (sessions.size >= maxSessions) return rpcError(503, -32000, "Too many open sessions; retry later");
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: eventStore.forSession(),
        retryInterval: SSE_RETRY_MS,
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, owner, lastSeen: Date.now() });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      const server = createMcpServer(catalog);
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      const response = await transport.handleRequest(request, options(authInfo, parsedBody));
      // Not an initialize request: nothing was opened, so nothing to keep.
      if (!transport.sessionId) await server.close();
      return response;
    },
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((s) => s.transport.close()));
    },
  };
}

export function createMcpEndpoint(catalog: Catalog, limits: { maxSessions?: number } = {}): McpEndpoint {
  return catalog.settings.stateless_http
    ? statelessEndpoint(catalog)
    : sessionEndpoint(catalog, limits.maxSessions ?? MAX_SESSIONS);
}
