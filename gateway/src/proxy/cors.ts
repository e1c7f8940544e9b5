// CORS for browser MCP clients on origins the Origin guard admitted (SVC_ALLOWED_ORIGINS, or loopback when
// bound to loopback). Without these headers a browser would drop the answer, and could not read
// Mcp-Session-Id. Requests without Origin (every non-browser client) get none of this.
import type { ProxyAnswer } from "./proxy-answer.ts";

const ALLOWED_REQUEST_HEADERS =
  "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id, x-request-id";
const EXPOSED_RESPONSE_HEADERS = "mcp-session-id, mcp-protocol-version, www-authenticate, x-request-id";

/** Headers added to every answer for an admitted browser origin. */
export function corsResponseHeaders(origin: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-expose-headers": EXPOSED_RESPONSE_HEADERS,
    vary: "origin",
  };
}

/** The answer to a preflight (OPTIONS) from an admitted origin. */
export function preflightAnswer(origin: string, requestId: string): ProxyAnswer {
  return {
    status: 204,
    body: null,
    headers: {
      ...corsResponseHeaders(origin),
      "access-control-allow-methods": "GET, POST, DELETE",
      "access-control-allow-headers": ALLOWED_REQUEST_HEADERS,
      "access-control-max-age": "600",
      "x-request-id": requestId,
    },
  };
}
