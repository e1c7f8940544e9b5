// Step 2 of the pipeline: who is calling. One AuthMode per config generation (providers change on reload), so a
// request costs a header parse and, for a token seen before, a hash lookup in the verifier's cache.
// Closed by default: without identity providers every request is refused, unless the operator explicitly set
// SVC_ALLOW_ANONYMOUS=true (local development; docs/access.md).
import type { IdentityProviderConfig } from "../config/index.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { bearerChallenge, bearerTokenOf } from "./bearer.ts";
import type { Principal } from "./principal.ts";
import { resourceMetadataUrl } from "./resource-metadata.ts";
import { TokenRejected } from "./token-rejected.ts";
import { TokenVerifier } from "./token-verifier.ts";

export type AuthMode =
  | { kind: "verify"; verifier: TokenVerifier }
  /** No identity providers and SVC_ALLOW_ANONYMOUS=true: everyone is `anonymous`. */
  | { kind: "anonymous" }
  /** No identity providers: nobody gets in. */
  | { kind: "closed" };

/** The caller when anonymous access is on: no groups, so RBAC grants only what is open to everyone. */
export const ANONYMOUS_PRINCIPAL: Readonly<Principal> = Object.freeze({
  sub: "anonymous",
  idp: "anonymous",
  groups: [],
  scopes: [],
  expiresAt: Number.POSITIVE_INFINITY,
});

/**
 * Providers configured → verify tokens; SVC_ALLOW_ANONYMOUS is then ignored (a configured gateway never lets a
 * caller without a token in). No providers → closed, or anonymous when explicitly allowed.
 */
export function authModeFor(providers: readonly IdentityProviderConfig[], allowAnonymous: boolean): AuthMode {
  if (providers.length > 0) return { kind: "verify", verifier: new TokenVerifier(providers) };
  return allowAnonymous ? { kind: "anonymous" } : { kind: "closed" };
}

/** A URL with no query, for requests whose URL has none: spares a URL parse on the hot path. */
const NO_QUERY = new URL("http://gateway/");

export interface AuthRequest {
  authorization: string | undefined;
  /** The request target as received (path and query). */
  rawUrl: string | undefined;
  /** `scheme://host[:port]` the client used, for the resource_metadata link in a challenge. */
  baseUrl: string;
  server: string;
}

/** Resolves to the caller, or rejects with a GatewayError `unauthorized` carrying the WWW-Authenticate challenge. */
export async function authenticate(mode: AuthMode, request: AuthRequest): Promise<Principal> {
  try {
    const url = request.rawUrl?.includes("?") === true ? new URL(request.rawUrl, "http://gateway") : NO_QUERY;
    if (mode.kind === "anonymous") {
      // Still refuse a token in the URL: it is in some log now, and the client should learn that.
      if (url.searchParams.has("access_token")) bearerTokenOf(request.authorization, url);
      return ANONYMOUS_PRINCIPAL;
    }
    const token = bearerTokenOf(request.authorization, url);
    if (mode.kind === "closed") {
      throw new TokenRejected("untrusted_issuer", "no identity providers are configured on this gateway");
    }
    return await mode.verifier.verify(token);
  } catch (error) {
    if (!(error instanceof TokenRejected)) throw error;
    throw unauthorized(error, request);
  }
}

function unauthorized(rejection: TokenRejected, request: AuthRequest): GatewayError {
  const metadata = resourceMetadataUrl(request.baseUrl, request.server);
  // The client learns `invalid_token` and a short message; the precise reason goes to logs and the audit trail.
  const message =
    rejection.reason === "missing"
      ? "Authentication required: send Authorization: Bearer <token>"
      : `Invalid bearer token: ${rejection.message}`;
  return new GatewayError("unauthorized", message, {
    cause: rejection,
    headers: { "www-authenticate": bearerChallenge(metadata, rejection) },
  });
}

/** Why a request was refused at step 2, for the access log and audit; undefined when it was not. */
export function rejectionReasonOf(error: GatewayError): string | undefined {
  return error.code === "unauthorized" && error.cause instanceof TokenRejected
    ? error.cause.reason
    : undefined;
}
