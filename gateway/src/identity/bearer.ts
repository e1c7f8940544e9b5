import { TokenRejected } from "./token-rejected.ts";

/**
 * The bearer token from the Authorization header (RFC 6750 section 2.1), the only place the gateway accepts one.
 * A token in the query string (`access_token=`) is refused outright rather than ignored: URLs end up in logs.
 */
export function bearerTokenOf(authorization: string | undefined, url: URL): string {
  if (url.searchParams.has("access_token")) {
    throw new TokenRejected(
      "malformed",
      "tokens in the query string are refused; send Authorization: Bearer <token>",
    );
  }
  if (authorization === undefined || authorization.trim() === "") {
    throw new TokenRejected("missing", "no Authorization header");
  }
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization);
  if (match?.[1] === undefined)
    throw new TokenRejected("malformed", "the Authorization header is not a Bearer token");
  return match[1];
}

/**
 * The 401 challenge (RFC 6750 section 3, RFC 9728 section 5.1): names the protected-resource metadata so an MCP
 * client can discover the authorization servers. A missing token gets no error code, as RFC 6750 asks.
 */
export function bearerChallenge(resourceMetadataUrl: string, rejection?: TokenRejected): string {
  const parts = ['Bearer realm="svc-gateway"'];
  if (rejection !== undefined && rejection.reason !== "missing") {
    parts.push('error="invalid_token"', `error_description="${rejection.message.replaceAll('"', "'")}"`);
  }
  parts.push(`resource_metadata="${resourceMetadataUrl}"`);
  return parts.join(", ");
}
