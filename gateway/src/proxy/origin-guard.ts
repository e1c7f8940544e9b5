// DNS-rebinding protection required by the MCP Streamable HTTP transport. A browser page on evil.example
// that rebinds its name to the gateway's address sends `Origin: http://evil.example` and
// `Host: evil.example`, so two checks:
// - Origin, when present, must be allowed: listed in SVC_ALLOWED_ORIGINS (comma-separated, `*` = any), or,
//   when the gateway is bound to loopback, itself a loopback origin (local tools such as an MCP inspector).
//   Requests without Origin (non-browser MCP clients) pass: browsers always send it on cross-origin fetches.
// - Host, when the gateway is bound to loopback, must name a loopback host (`localhost`, 127.x, [::1]).
import { GatewayError } from "../errors/gateway-error.ts";

export interface OriginPolicy {
  /** Exact origins (scheme://host[:port]) allowed; `any` when SVC_ALLOWED_ORIGINS is `*`. */
  allowed: Set<string> | "any";
  /** The gateway listens on a loopback address only. */
  loopbackBound: boolean;
}

export function parseAllowedOrigins(text: string | undefined): Set<string> | "any" {
  const allowed = new Set<string>();
  for (const item of (text ?? "").split(",")) {
    const origin = item.trim();
    if (origin === "") continue;
    if (origin === "*") return "any";
    allowed.add(normaliseOrigin(origin) ?? origin);
  }
  return allowed;
}

export function isLoopbackAddress(host: string): boolean {
  return host === "localhost" || host === "::1" || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

function normaliseOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.origin === "null" ? undefined : url.origin;
  } catch {
    return undefined;
  }
}

/** Host header → host name without port (IPv6 keeps its brackets). */
function hostName(host: string): string {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(":");
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

/** Returns the error to answer with, or undefined when the request may proceed. */
export function checkOrigin(
  policy: OriginPolicy,
  origin: string | undefined,
  host: string | undefined,
): GatewayError | undefined {
  if (policy.loopbackBound && (host === undefined || !isLoopbackAddress(hostName(host)))) {
    return new GatewayError(
      "host_not_allowed",
      `Host header '${host ?? ""}' is not a loopback host; the gateway is bound to loopback (DNS rebinding protection)`,
    );
  }
  if (origin === undefined || policy.allowed === "any") return undefined;
  const normalised = normaliseOrigin(origin);
  if (normalised !== undefined) {
    if (policy.allowed.has(normalised)) return undefined;
    if (policy.loopbackBound && isLoopbackAddress(new URL(normalised).hostname)) return undefined;
  }
  return new GatewayError(
    "origin_not_allowed",
    `Origin '${origin}' is not allowed; add it to SVC_ALLOWED_ORIGINS to admit browser clients from it`,
  );
}
