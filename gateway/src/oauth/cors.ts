// CORS for the authorization server's endpoints that a client running in a web page calls itself (the MCP SDK in a
// browser, web agents): registration, token and revocation, from the origins the gateway's origin policy admits
// (SVC_ALLOWED_ORIGINS, or loopback origins when bound to loopback). The public metadata (RFC 8414 / OIDC discovery,
// JWKS) is readable from any origin: oidc-provider answers those itself. A request from an origin the policy does not
// admit is refused here, before any work: without it, any page a user visits could spend registrations (and the
// gateway's registration budget) from the user's own address.
import type { IncomingMessage, ServerResponse } from "node:http";
import { checkOrigin, type OriginPolicy } from "../proxy/origin-guard.ts";

/** Endpoints a browser-based client POSTs to. */
const CLIENT_ENDPOINTS = new Set(["/oauth/register", "/oauth/token", "/oauth/revoke"]);
const ALLOWED_METHODS = "POST, OPTIONS";
/** What such a client sends: its credentials, a JSON or form body, a DPoP proof, the MCP version header. */
const ALLOWED_HEADERS = "authorization, content-type, dpop, mcp-protocol-version, x-request-id";
const EXPOSED_HEADERS = "www-authenticate, dpop-nonce, retry-after, x-request-id";

/**
 * Applies the policy to a request at `pathname`. "answered": a preflight, or a refused origin, was answered here;
 * "continue": the request goes on to the provider (with the CORS headers for its origin already set).
 */
export function clientEndpointCors(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  policy: OriginPolicy | undefined,
): "answered" | "continue" {
  const origin = req.headers.origin;
  if (!CLIENT_ENDPOINTS.has(pathname) || origin === undefined || policy === undefined) return "continue";
  const refusal = checkOrigin(policy, origin, req.headers.host);
  if (refusal !== undefined) {
    res.writeHead(403, { "content-type": "application/json", "cache-control": "no-store", vary: "origin" });
    res.end(JSON.stringify({ error: "invalid_request", error_description: refusal.message }));
    return "answered";
  }
  res.setHeader("access-control-allow-origin", origin);
  res.setHeader("vary", "origin");
  if (req.method === "OPTIONS") {
    res.writeHead(204, {
      "access-control-allow-methods": ALLOWED_METHODS,
      "access-control-allow-headers": ALLOWED_HEADERS,
      "access-control-max-age": "600",
    });
    res.end();
    return "answered";
  }
  res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
  return "continue";
}
