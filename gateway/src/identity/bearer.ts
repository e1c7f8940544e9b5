import { TokenRejected } from "./token-rejected.ts";
import { ACCEPTED_ALGORITHMS } from "./token-verifier.ts";

/** How the access token was presented: `Bearer` (RFC 6750) or `DPoP` (RFC 9449 section 7.1). */
export type AuthScheme = "bearer" | "dpop";

export interface Credentials {
  scheme: AuthScheme;
  token: string;
}

/**
 * The access token from the Authorization header (RFC 6750 section 2.1, RFC 9449 section 7.1), the only place the
 * gateway accepts one. Whether the scheme fits the token (DPoP for a DPoP-bound token, Bearer otherwise) is decided
 * once the token is verified. A token in the query string (`access_token=`) is refused outright rather than
 * ignored: URLs end up in logs.
 */
export function accessTokenOf(authorization: string | undefined, url: URL): Credentials {
  if (url.searchParams.has("access_token")) {
    throw new TokenRejected(
      "malformed",
      "tokens in the query string are refused; send Authorization: Bearer <token>",
    );
  }
  if (authorization === undefined || authorization.trim() === "") {
    throw new TokenRejected("missing", "no Authorization header");
  }
  const match = /^(Bearer|DPoP)[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization);
  if (match?.[1] === undefined || match[2] === undefined) {
    throw new TokenRejected("malformed", "the Authorization header is not a Bearer or DPoP token");
  }
  return { scheme: match[1].toLowerCase() === "dpop" ? "dpop" : "bearer", token: match[2] };
}

/**
 * The 401 challenge (RFC 6750 section 3, RFC 9728 section 5.1): names the protected-resource metadata so an MCP
 * client can discover the authorization servers. A missing token gets no error code, as RFC 6750 asks.
 */
export function bearerChallenge(resourceMetadataUrl: string, rejection?: TokenRejected): string {
  const parts = ['Bearer realm="svc-gateway"'];
  if (rejection !== undefined && rejection.reason !== "missing") {
    parts.push('error="invalid_token"', `error_description="${quoted(rejection.message)}"`);
  }
  parts.push(`resource_metadata="${resourceMetadataUrl}"`);
  return parts.join(", ");
}

/** The proof algorithms the gateway verifies, for the DPoP challenge's `algs` (RFC 9449 section 7.1). */
const DPOP_ALGS = ACCEPTED_ALGORITHMS.join(" ");

/**
 * The DPoP challenge (RFC 9449 section 7.1), for a refusal about DPoP (the proof, the binding, the scheme) or a
 * token sent with the DPoP scheme: `invalid_dpop_proof` when the proof is at fault, `invalid_token` otherwise
 * (as the RFC's own example answers a key binding mismatch).
 */
export function dpopChallenge(resourceMetadataUrl: string, rejection: TokenRejected): string {
  const error = rejection.reason === "invalid_dpop_proof" ? "invalid_dpop_proof" : "invalid_token";
  return [
    'DPoP realm="svc-gateway"',
    `error="${error}"`,
    `error_description="${quoted(rejection.message)}"`,
    `algs="${DPOP_ALGS}"`,
    `resource_metadata="${resourceMetadataUrl}"`,
  ].join(", ");
}

/**
 * A message inside a quoted-string: printable ASCII without `"` and `\` (they would end or escape it), and short.
 * Some messages quote the client's own proof (its htm), which must not be able to break the header.
 */
function quoted(message: string): string {
  return message
    .slice(0, 200)
    .replaceAll('"', "'")
    .replace(/[^\x20-\x7e]|\\/g, "?");
}
