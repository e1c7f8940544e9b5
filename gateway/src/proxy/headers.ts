// Which headers cross the gateway. Both directions are allow-lists: a header nobody thought about stays on its
// own side. Upstream answers carry only what an MCP client needs, because anything else (WWW-Authenticate,
// Location, Set-Cookie, CORS, HSTS, Clear-Site-Data, Alt-Svc...) would be the upstream speaking for the gateway's
// origin to the client. Client requests carry only the MCP transport's headers and trace context, because the
// upstream must never take an identity or a forwarding chain the client asserted about itself: the gateway
// states the forwarding facts (X-Forwarded-*) itself.
import type { IncomingHttpHeaders } from "node:http";

/** Client request headers every upstream receives: the MCP Streamable HTTP transport's and W3C trace context. */
export const DEFAULT_FORWARDED_REQUEST_HEADERS: readonly string[] = [
  "content-type",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
  "user-agent",
  "traceparent",
  "tracestate",
  "baggage",
];

/** Upstream response headers the client receives; everything else is dropped. */
const FORWARDED_RESPONSE_HEADERS: readonly string[] = [
  "content-type", // JSON answer or SSE stream: the client's transport branches on it
  "mcp-session-id",
  "mcp-protocol-version",
  "cache-control", // an SSE stream's no-cache must reach every proxy up to the client
  "retry-after", // tells a well-behaved client when to come back after a 429 instead of hammering
  "vary", // only ever narrows what a cache may reuse: dropping it next to Cache-Control could widen it
  "allow", // a 405 (a server without a GET stream) names the methods it supports (RFC 9110 15.5.6)
];

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

/** Request headers the gateway sets itself or that only concern the client's hop; an operator cannot add them. */
const GATEWAY_SET_REQUEST_HEADERS = new Set([
  ...HOP_BY_HOP,
  "host", // undici sets the upstream's own
  "content-length", // recomputed from the body the gateway sends
  "expect",
  "x-request-id", // the gateway's request id
  "accept-encoding", // always identity: the gateway must read every answer (see isIdentityEncoding)
  "content-encoding",
]);

// Names that carry credentials, or a claim about who or where the client is. Matching is deliberately wide (a
// name that merely looks like one is refused too): a name refused by mistake costs an operator a rename, one let
// through by mistake lets any client speak for any user to the upstream.
const IDENTITY_NAMES = new Set(["authorization", "cookie", "dpop", "forwarded", "via", "from"]);
const IDENTITY_FRAGMENTS = [
  "auth", // authorization, proxy-authorization, x-auth-request-*, x-goog-authenticated-user-*, x-webauth-user
  "cookie",
  "credential",
  "token",
  "secret",
  "passw",
  "apikey",
  "jwt", // cf-access-jwt-assertion, x-goog-iap-jwt-assertion
  "assertion",
  "oidc", // x-amzn-oidc-*
  "principal", // x-ms-client-principal-*
  "identity",
  "forwarded", // forwarded, x-forwarded-*, x-original-forwarded-for
  "cert", // x-client-cert, x-ssl-client-cert, x-forwarded-client-cert
  "ssl-client", // x-ssl-client-s-dn
];
/** Whole words of a name (split at `-`, `_`, `.`): *-user, *-email, x-real-ip, x-remote-*, x-api-key... */
const IDENTITY_WORDS = new Set([
  "user",
  "users",
  "userid",
  "username",
  "login",
  "email",
  "mail",
  "groups",
  "roles",
  "ip",
  "remote",
  "key",
]);

/** HTTP field-name syntax (RFC 9110 5.1, token), lower case. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** Bounds of SVC_FORWARD_REQUEST_HEADERS: a list, not a way around the allow-list. */
const MAX_EXTRA_HEADERS = 64;
const MAX_HEADER_NAME_LENGTH = 128;

export function carriesIdentity(name: string): boolean {
  if (IDENTITY_NAMES.has(name)) return true;
  for (const fragment of IDENTITY_FRAGMENTS) if (name.includes(fragment)) return true;
  for (const word of name.split(/[-_.]/)) if (IDENTITY_WORDS.has(word)) return true;
  return false;
}

/**
 * The request headers forwarded upstream: the defaults plus the operator's `extra` names
 * (SVC_FORWARD_REQUEST_HEADERS). Throws naming the first name that is malformed, set by the gateway itself, or
 * carries credentials or identity.
 */
export function forwardedRequestHeaders(extra: readonly string[]): ReadonlySet<string> {
  const allowed = new Set(DEFAULT_FORWARDED_REQUEST_HEADERS);
  if (extra.length > MAX_EXTRA_HEADERS) {
    throw new Error(`at most ${MAX_EXTRA_HEADERS} header names, got ${extra.length}`);
  }
  for (const raw of extra) {
    const name = raw.trim().toLowerCase();
    if (allowed.has(name)) continue; // a default listed again: already forwarded
    if (name.length > MAX_HEADER_NAME_LENGTH || !HEADER_NAME.test(name)) {
      throw new Error(`'${raw.slice(0, MAX_HEADER_NAME_LENGTH)}' is not an HTTP header name`);
    }
    if (carriesIdentity(name)) {
      throw new Error(
        `'${name}' looks like a credential or an identity/forwarding header; the gateway never forwards what a ` +
          "client asserts about itself (it sets X-Forwarded-For, -Proto and -Host itself)",
      );
    }
    if (GATEWAY_SET_REQUEST_HEADERS.has(name)) {
      throw new Error(`'${name}' is set by the gateway itself (or only concerns the client's connection)`);
    }
    allowed.add(name);
  }
  return allowed;
}

export interface UpstreamRequestFacts {
  requestId: string;
  /** Client headers the upstream may see: forwardedRequestHeaders(). */
  allowed: ReadonlySet<string>;
  /** The client's socket address (the previous hop: a load balancer's when there is one). */
  clientAddress: string | undefined;
  /** SVC_PUBLIC_URL's origin, else undefined: then the client's Host header over http. */
  publicUrl: string | undefined;
  /** The upstream auth headers of the route (api_key), added last. */
  auth: Readonly<Record<string, string>> | undefined;
}

/**
 * The last Connection value seen and its tokens. Nearly every message carries the same one ("keep-alive"), so it is
 * split once, not per request in both directions; one entry, so it cannot grow.
 */
let lastConnection: { value: string; tokens: ReadonlySet<string> | undefined } | undefined;

/** Names listed in a Connection header are hop-by-hop for this message too. */
function connectionTokens(value: string | string[] | undefined): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : value;
  if (lastConnection?.value === text) return lastConnection.tokens;
  const tokens = new Set<string>();
  for (const token of text.split(",")) {
    const name = token.trim().toLowerCase();
    if (name !== "") tokens.add(name);
  }
  lastConnection = { value: text, tokens: tokens.size > 0 ? tokens : undefined };
  return lastConnection.tokens;
}

/** An IPv4 client of a dual-stack listener shows as ::ffff:a.b.c.d; the upstream gets the plain address. */
function plainAddress(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  facts: UpstreamRequestFacts,
): Record<string, string | string[]> {
  const dropped = connectionTokens(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (!facts.allowed.has(name) || dropped?.has(name)) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  out["x-request-id"] = facts.requestId;
  // The gateway must read every answer to filter and inspect it, so it never asks for a compressed one; the
  // loopback or cluster hop to the upstream gains little from compression anyway.
  out["accept-encoding"] = "identity";
  // Replaced, not appended to: a chain the client sent is its own claim, and the gateway is where trust starts.
  if (facts.clientAddress !== undefined) out["x-forwarded-for"] = plainAddress(facts.clientAddress);
  if (facts.publicUrl !== undefined) {
    const schemeEnd = facts.publicUrl.indexOf("://");
    out["x-forwarded-proto"] = facts.publicUrl.slice(0, schemeEnd);
    out["x-forwarded-host"] = facts.publicUrl.slice(schemeEnd + 3);
  } else {
    out["x-forwarded-proto"] = "http"; // the gateway itself only listens on plain HTTP
    if (incoming.host !== undefined) out["x-forwarded-host"] = incoming.host;
  }
  if (facts.auth !== undefined) Object.assign(out, facts.auth);
  return out;
}

export function downstreamResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  requestId: string,
): Record<string, string> {
  const dropped = connectionTokens(upstream.connection);
  const out: Record<string, string> = {};
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = upstream[name];
    if (value === undefined || dropped?.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  out["x-request-id"] = requestId;
  return out;
}

/**
 * True when an upstream's Content-Encoding says the answer is uncompressed. The gateway asks for identity; a compressed answer anyway would
 * pass every response policy (list filtering, SSE inspection) unread, so it is refused rather than relayed.
 */
export function isIdentityEncoding(value: string | string[]): boolean {
  const text = Array.isArray(value) ? value.join(",") : value;
  for (const coding of text.split(",")) {
    const name = coding.trim().toLowerCase();
    if (name !== "" && name !== "identity") return false;
  }
  return true;
}
