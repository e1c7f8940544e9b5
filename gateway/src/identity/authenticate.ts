// Step 2 of the pipeline: who is calling. One AuthMode per config generation (providers change on reload), so a
// request with a plain bearer token costs a header parse and, for a token seen before, a hash lookup in the
// verifier's cache. A DPoP-bound token adds its proof's signature check on every request: proofs differ per request.
// Closed by default: without identity providers every request is refused, unless the operator explicitly set
// SVC_ALLOW_ANONYMOUS=true (local development; docs/access.md).
import type { IdentityProviderConfig } from "../config/index.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import {
  type AuthScheme,
  accessTokenOf,
  bearerChallenge,
  type Credentials,
  dpopChallenge,
} from "./bearer.ts";
import { type DpopProof, verifyDpopProof } from "./dpop-proof.ts";
import type { Principal } from "./principal.ts";
import { resourceMetadataUrl } from "./resource-metadata.ts";
import { TokenRejected } from "./token-rejected.ts";
import { type OwnIssuerTrust, TokenVerifier } from "./token-verifier.ts";
import { VerificationCache } from "./verification-cache.ts";

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
export function authModeFor(
  providers: readonly IdentityProviderConfig[],
  allowAnonymous: boolean,
  ownIssuer?: OwnIssuerTrust,
  /** The gateway's origin: the audience of providers without api_identifiers (audience.ts). */
  gatewayOrigin?: string,
): AuthMode {
  if (providers.length > 0 || ownIssuer !== undefined) {
    const options = gatewayOrigin === undefined ? {} : { gatewayOrigin };
    return { kind: "verify", verifier: new TokenVerifier(providers, options, ownIssuer) };
  }
  return allowAnonymous ? { kind: "anonymous" } : { kind: "closed" };
}

/** A URL with no query, for requests whose URL has none: spares a URL parse on the hot path. */
const NO_QUERY = new URL("http://gateway/");

export interface AuthRequest {
  authorization: string | undefined;
  /** The DPoP header (RFC 9449), when the client sent one. */
  dpop: string | undefined;
  /** The HTTP method, which a DPoP proof names (htm). */
  method: string;
  /** The request target as received (path and query). */
  rawUrl: string | undefined;
  /** `scheme://host[:port]` the client used, for the resource_metadata link in a challenge and a proof's htu. */
  baseUrl: string;
  server: string;
  /**
   * Verify a DPoP proof sent with a token that is not bound to a key (or in anonymous mode) too: replay protection
   * wants to spend its jti, and a jti is only worth spending once the proof verifies. A bound token's proof is
   * always verified, whatever this says: that is authentication.
   */
  verifyUnboundProof: boolean;
}

export interface Authenticated {
  principal: Principal;
  /** The DPoP proof verified for this request, if one was (for replay protection to spend its jti). */
  proof: DpopProof | undefined;
  /** How the token was presented (undefined in anonymous mode), for the challenge of a later refusal. */
  scheme: AuthScheme | undefined;
  /** The access token itself (undefined in anonymous mode), for the provider's userinfo endpoint. */
  token: string | undefined;
}

/**
 * Resolves to the caller (and the verified DPoP proof, if any), or rejects with a GatewayError `unauthorized`
 * carrying the WWW-Authenticate challenge. A token whose claims carry `cnf.jkt` is DPoP-bound (RFC 9449): it is
 * accepted only with the DPoP scheme and a proof for this request, signed by that key, naming this token (ath).
 */
export async function authenticate(mode: AuthMode, request: AuthRequest): Promise<Authenticated> {
  let scheme: AuthScheme | undefined;
  try {
    const url = request.rawUrl?.includes("?") === true ? new URL(request.rawUrl, "http://gateway") : NO_QUERY;
    if (mode.kind === "anonymous") {
      // Still refuse a token in the URL: it is in some log now, and the client should learn that.
      if (url.searchParams.has("access_token")) accessTokenOf(request.authorization, url);
      return {
        principal: ANONYMOUS_PRINCIPAL,
        proof: await unboundProof(request),
        scheme: undefined,
        token: undefined,
      };
    }
    const credentials = accessTokenOf(request.authorization, url);
    scheme = credentials.scheme;
    if (mode.kind === "closed") {
      throw new TokenRejected("untrusted_issuer", "no identity providers are configured on this gateway");
    }
    const principal = await mode.verifier.verify(credentials.token);
    if (principal.dpopJkt === undefined) {
      // The DPoP scheme claims a sender-constrained token; accepting an unbound one under it would let a client
      // believe it is protected when it is not.
      if (scheme === "dpop") {
        throw new TokenRejected(
          "dpop_binding",
          "the token is not DPoP-bound (no cnf.jkt); send it as Authorization: Bearer",
        );
      }
      return { principal, proof: await unboundProof(request), scheme, token: credentials.token };
    }
    return {
      principal,
      proof: await bindingProof(request, credentials, principal.dpopJkt),
      scheme,
      token: credentials.token,
    };
  } catch (error) {
    if (!(error instanceof TokenRejected)) throw error;
    throw unauthorized(error, request, scheme);
  }
}

/**
 * A server that names an identity provider (`idp`) admits only that provider's tokens: its RBAC groups are that
 * provider's groups, and another provider's `staff` is somebody else's staff. A server without `idp` admits a token
 * from any configured provider. Refused → the same 401 as any invalid token; the challenge's resource_metadata is
 * the server's own, which lists only its provider. Runs after `authenticate`, so the refused caller (verified, just
 * not for this server) is on the log and audit record.
 */
export function requireServerProvider(
  idp: string | undefined,
  authenticated: Authenticated,
  request: AuthRequest,
): void {
  if (idp === undefined || authenticated.principal.idp === idp) return;
  const rejection = new TokenRejected(
    "wrong_provider",
    "the token is issued by another identity provider than this server's (see resource_metadata)",
  );
  throw unauthorized(rejection, request, authenticated.scheme);
}

/**
 * A token from the gateway's own authorization server is for one resource (RFC 8707): the gateway as a whole, or
 * this server's /{server}/mcp. A token for another server of the same gateway is refused here like a token for
 * another audience, so a client cannot spend a token the user granted for one server on another.
 */
export function requireResource(
  authenticated: Authenticated,
  request: AuthRequest,
  /** The own authorization server's issuer: the origin of every resource it issues tokens for. */
  issuer: string | undefined,
): void {
  const resources = authenticated.principal.resources;
  if (resources === undefined) return;
  // The issuer, not this request's Host: behind a proxy the gateway may be reached under another name.
  const gateway = originOf(issuer ?? request.baseUrl);
  const server = `${gateway}/${encodeURIComponent(request.server)}/mcp`;
  if (resources.includes(gateway) || resources.includes(server)) return;
  const rejection = new TokenRejected("wrong_audience", `the token is not for ${server}`);
  throw unauthorized(rejection, request, authenticated.scheme);
}

function originOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return "";
  }
}

/**
 * A user token of the gateway's own authorization server is good only while its grant lives: revoking the refresh
 * token, or reusing a rotated one, revokes the grant, and the access tokens issued under it stop working at once
 * instead of at their expiry. One KV read per request with such a token; the store unreachable → 503, never admitted.
 */
export async function requireLiveGrant(
  authenticated: Authenticated,
  request: AuthRequest,
  isLive: ((grantId: string) => Promise<boolean>) | undefined,
): Promise<void> {
  const grantId = authenticated.principal.grantId;
  if (grantId === undefined || isLive === undefined) return;
  let live: boolean;
  try {
    live = await isLive(grantId);
  } catch (error) {
    throw new GatewayError(
      "not_ready",
      "Cannot check the token's authorization (the store is unreachable); try again",
      {
        cause: error,
      },
    );
  }
  if (live) return;
  const rejection = new TokenRejected("revoked", "the authorization behind this token was revoked");
  throw unauthorized(rejection, request, authenticated.scheme);
}

/** The proof that a DPoP-bound token is presented by the holder of its key (RFC 9449 sections 4.3 and 7.1). */
async function bindingProof(request: AuthRequest, credentials: Credentials, jkt: string): Promise<DpopProof> {
  if (credentials.scheme !== "dpop") {
    // RFC 9449 section 7.2: a bound token sent as Bearer must be refused, or DPoP could simply be dropped.
    throw new TokenRejected(
      "dpop_binding",
      "the token is DPoP-bound; send it as Authorization: DPoP with a DPoP proof",
    );
  }
  const proof = await verifyDpopProof(request.dpop, request.method, htuOf(request), Date.now());
  // The verifier caches by the same base64url(SHA-256(token)) that RFC 9449 defines as ath.
  if (proof.ath === undefined) throw new TokenRejected("invalid_dpop_proof", "the proof has no ath");
  if (proof.ath !== VerificationCache.keyOf(credentials.token)) {
    throw new TokenRejected("invalid_dpop_proof", "the proof's ath is not the hash of this access token");
  }
  if (proof.thumbprint !== jkt) {
    throw new TokenRejected(
      "dpop_binding",
      "Invalid DPoP key binding: the proof is signed by another key than the token is bound to",
    );
  }
  return proof;
}

/**
 * A proof next to a token that is not bound to a key (or in anonymous mode) proves nothing about the caller, so
 * authentication ignores it (RFC 9449 lets a resource server accept such a token as a plain bearer token; its ath
 * is not compared either). It is verified only when replay protection will spend its jti.
 */
function unboundProof(request: AuthRequest): Promise<DpopProof | undefined> | undefined {
  if (request.dpop === undefined || !request.verifyUnboundProof) return undefined;
  return verifyDpopProof(request.dpop, request.method, htuOf(request), Date.now());
}

/** The URL a proof must name: SVC_PUBLIC_URL's origin (else http:// + Host) and the path (the query is ignored). */
function htuOf(request: AuthRequest): string {
  return `${request.baseUrl}${request.rawUrl ?? ""}`;
}

function unauthorized(
  rejection: TokenRejected,
  request: AuthRequest,
  scheme: AuthScheme | undefined,
): GatewayError {
  const metadata = resourceMetadataUrl(request.baseUrl, request.server);
  // The challenge answers in the scheme the client used, and in DPoP for anything about DPoP (RFC 9449 7.1).
  const aboutDpop =
    scheme === "dpop" || rejection.reason === "invalid_dpop_proof" || rejection.reason === "dpop_binding";
  // The client learns the error code and a short message; the precise reason goes to logs and the audit trail.
  const message =
    rejection.reason === "missing"
      ? "Authentication required: send Authorization: Bearer <token>"
      : rejection.reason === "invalid_dpop_proof"
        ? `Invalid DPoP proof: ${rejection.message}`
        : `Invalid ${aboutDpop ? "access" : "bearer"} token: ${rejection.message}`;
  return new GatewayError("unauthorized", message, {
    cause: rejection,
    headers: {
      "www-authenticate": aboutDpop
        ? dpopChallenge(metadata, rejection)
        : bearerChallenge(metadata, rejection),
    },
  });
}

/** Why a request was refused at step 2, for the access log and audit; undefined when it was not. */
export function rejectionReasonOf(error: GatewayError): string | undefined {
  return error.code === "unauthorized" && error.cause instanceof TokenRejected
    ? error.cause.reason
    : undefined;
}
