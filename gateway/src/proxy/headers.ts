// Which headers cross the gateway. The proxy is transparent for end-to-end headers (Mcp-Session-Id,
// MCP-Protocol-Version, Last-Event-ID, Accept, Content-Type and anything else), and drops what must not
// cross: hop-by-hop headers (RFC 9110 7.6.1), and on the way up the client's credentials for the gateway
// (Authorization, DPoP, Cookie) and browser-origin headers the gateway has already checked.
import type { IncomingHttpHeaders } from "node:http";

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "http2-settings",
]);

/** Request headers never sent upstream, in addition to hop-by-hop ones. */
const NOT_FORWARDED_UPSTREAM = new Set([
  "host", // undici sets the upstream's own Host
  "content-length", // recomputed from the body the gateway sends
  "authorization", // the client's token is for the gateway, never for the upstream
  "dpop", // its proof of possession belongs to that token and names the gateway's URL (htu): same reason
  "cookie",
  "origin", // validated by the gateway; the upstream sees a server-to-server call
  "referer",
  "expect",
  "x-request-id", // replaced by the gateway's own request id
  // The gateway reads SSE event by event, so it asks for identity encoding; the loopback or cluster hop to the
  // upstream gains nothing from compression anyway.
  "accept-encoding",
]);

/** Response headers the gateway sets itself, and cookies: the client never sends them back upstream. */
const NOT_FORWARDED_DOWNSTREAM = new Set(["content-length", "x-request-id", "date", "set-cookie"]);

/** Names listed in a Connection header are hop-by-hop for this message too. */
function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : value;
  const tokens = new Set<string>();
  for (const token of text.split(",")) {
    const name = token.trim().toLowerCase();
    if (name !== "") tokens.add(name);
  }
  return tokens.size > 0 ? tokens : undefined;
}

export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  requestId: string,
  extra: Readonly<Record<string, string>> | undefined,
): Record<string, string | string[]> {
  const dropped = connectionTokens(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || NOT_FORWARDED_UPSTREAM.has(name) || dropped?.has(name)) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  out["x-request-id"] = requestId;
  if (extra !== undefined) Object.assign(out, extra);
  return out;
}

export function downstreamResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  requestId: string,
): Record<string, string> {
  const dropped = connectionTokens(upstream.connection);
  const out: Record<string, string> = {};
  for (const name in upstream) {
    if (HOP_BY_HOP.has(name) || NOT_FORWARDED_DOWNSTREAM.has(name) || dropped?.has(name)) continue;
    const value = upstream[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  out["x-request-id"] = requestId;
  return out;
}
