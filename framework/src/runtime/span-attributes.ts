import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Extra } from "./request-context.ts";

/** Attributes every server span carries (OpenTelemetry MCP semantic conventions). */
export function serverSpanAttributes(method: string, extra: Extra): Record<string, string> {
  const version = extra.requestInfo?.headers["mcp-protocol-version"];
  return {
    "mcp.method.name": method,
    "jsonrpc.request.id": String(extra.requestId),
    "network.transport": "tcp",
    "network.protocol.name": "http",
    ...(typeof version === "string" ? { "mcp.protocol.version": version } : {}),
    ...(extra.sessionId ? { "mcp.session.id": extra.sessionId } : {}),
  };
}

/** detailed_tracing "request context": who called and in which session, never the credential itself. */
export function requestDetails(server: Server, extra: Extra) {
  return {
    sessionId: extra.sessionId,
    clientId: extra.authInfo?.clientId,
    scopes: extra.authInfo?.scopes,
    clientInfo: server.getClientVersion(),
  };
}
