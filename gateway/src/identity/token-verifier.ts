import {
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { IdentityProviderConfig } from "../config/index.ts";
import { type AudienceRule, audienceRuleFor, gatewayResourcesIn } from "./audience.ts";
import { acceptedIssuers } from "./issuers.ts";
import { groupsFromClaims, isMachineToken, type Principal, scopesFromClaims } from "./principal.ts";
import { TokenRejected } from "./token-rejected.ts";
import { VerificationCache } from "./verification-cache.ts";

/** Only asymmetric signatures: a shared-secret (HS*) or unsigned (`none`) token is never accepted. */
export const ACCEPTED_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

/** Header parameters that carry or point at a key. Keys come from the provider's JWKS, never from the token. */
const KEY_BEARING_HEADERS = ["jwk", "jku", "x5u", "x5c"];

export interface TokenVerifierOptions {
  /** Allowed clock skew for exp / nbf / iat, in seconds. */
  clockToleranceSeconds?: number;
  /** Verified tokens kept in memory. */
  cacheCapacity?: number;
  /** Minimum time between JWKS refetches triggered by an unknown `kid`. */
  jwksCooldownMs?: number;
  /** How long a fetched JWKS is trusted before a refetch. */
  jwksMaxAgeMs?: number;
  now?: () => number;
  /**
   * The gateway's origin (SVC_PUBLIC_URL, else oauth_server.issuer): the audience of a provider configured without
   * api_identifiers (audience.ts). Without it, such a provider cannot be trusted and the constructor throws.
   */
  gatewayOrigin?: string;
}

interface TrustedProvider {
  name: string;
  issuers: string[];
  /** Undefined only for the own authorization server, whose tokens name resources the MCP route checks. */
  audience: AudienceRule | undefined;
  keys: JWTVerifyGetKey;
  /** The gateway's own authorization server: its tokens name one resource, which the MCP route checks per server. */
  own: boolean;
}

/** The gateway's own authorization server (oauth_server), trusted with its keys in memory: no fetch from itself. */
export interface OwnIssuerTrust {
  name: string;
  issuer: string;
  keys: JWTVerifyGetKey;
}

/** Verifies bearer JWTs against the configured identity providers; the token's `iss` selects the provider. */
export class TokenVerifier {
  readonly #byIssuer = new Map<string, TrustedProvider>();
  readonly #cache: VerificationCache;
  readonly #clockTolerance: number;
  readonly #now: () => number;

  constructor(
    providers: readonly IdentityProviderConfig[],
    options: TokenVerifierOptions = {},
    ownIssuer?: OwnIssuerTrust,
  ) {
    this.#cache = new VerificationCache(options.cacheCapacity ?? 10_000);
    this.#clockTolerance = options.clockToleranceSeconds ?? 30;
    this.#now = options.now ?? Date.now;
    for (const provider of providers) {
      const audience = audienceRuleFor(provider, options.gatewayOrigin);
      if (audience === undefined) {
        throw new Error(
          `identity provider ${provider.name} has no api_identifiers and the gateway's public URL is unknown: its tokens' audience cannot be checked`,
        );
      }
      const trusted: TrustedProvider = {
        name: provider.name,
        issuers: acceptedIssuers(provider),
        audience,
        keys: createRemoteJWKSet(new URL(provider.jwks_uri), {
          timeoutDuration: provider.timeout * 1000,
          cooldownDuration: options.jwksCooldownMs ?? 30_000,
          cacheMaxAge: options.jwksMaxAgeMs ?? 10 * 60_000,
        }),
        own: false,
      };
      for (const issuer of trusted.issuers) this.#byIssuer.set(issuer, trusted);
    }
    if (ownIssuer !== undefined) {
      this.#byIssuer.set(ownIssuer.issuer, {
        name: ownIssuer.name,
        issuers: [ownIssuer.issuer],
        audience: undefined,
        keys: ownIssuer.keys,
        own: true,
      });
    }
  }

  /** Resolves to the caller, or rejects with TokenRejected saying why. */
  async verify(token: string): Promise<Principal> {
    const key = VerificationCache.keyOf(token);
    const nowSeconds = Math.floor(this.#now() / 1000);
    const cached = this.#cache.get(key, nowSeconds);
    if (cached !== undefined) return cached;

    const claims = this.#inspect(token);
    const provider = this.#byIssuer.get(claims.iss as string);
    if (provider === undefined)
      throw new TokenRejected("untrusted_issuer", `no identity provider trusts issuer ${claims.iss}`);

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, provider.keys, {
        issuer: provider.issuers,
        ...(provider.audience?.kind === "listed" ? { audience: provider.audience.audiences } : {}),
        algorithms: ACCEPTED_ALGORITHMS,
        ...(provider.own ? { typ: "at+jwt" } : {}),
        clockTolerance: this.#clockTolerance,
        requiredClaims: ["exp"],
        currentDate: new Date(this.#now()),
      }));
    } catch (error) {
      throw rejectionFor(error);
    }
    // jose refuses a future nbf but, without maxTokenAge, not a future iat: a token issued later than now (beyond
    // the clock tolerance) comes from a clock that cannot be trusted, or was minted to be valid later.
    if (typeof payload.iat === "number" && payload.iat > nowSeconds + this.#clockTolerance) {
      throw new TokenRejected(
        "not_yet_valid",
        `the token is issued in the future (iat), beyond the ${this.#clockTolerance} s clock tolerance`,
      );
    }
    if (typeof payload.sub !== "string" || payload.sub === "") {
      throw new TokenRejected("missing_claim", 'the token has no "sub" claim');
    }
    const principal: Principal = {
      sub: payload.sub,
      idp: provider.name,
      groups: groupsFromClaims(payload),
      scopes: scopesFromClaims(payload),
      expiresAt: payload.exp as number,
    };
    if (provider.audience?.kind === "gateway") {
      principal.resources = gatewayResourcesIn(payload.aud, provider.audience.origin);
    }
    if (provider.own) {
      // RFC 9068: the access token profile is what this server issues; an ID token (no typ at+jwt) is not one.
      const resources = typeof payload.aud === "string" ? [payload.aud] : (payload.aud ?? []);
      if (resources.length === 0) throw new TokenRejected("missing_claim", 'the token has no "aud" claim');
      principal.resources = resources;
      if (typeof payload.grant_id === "string") principal.grantId = payload.grant_id;
    }
    const dpopJkt = dpopKeyOf(payload);
    if (dpopJkt !== undefined) principal.dpopJkt = dpopJkt;
    if (typeof payload.oid === "string" && payload.oid !== "") principal.oid = payload.oid;
    if (isMachineToken(payload)) principal.machine = true;
    this.#cache.set(key, principal);
    return principal;
  }

  /** Cheap structural checks before any key is fetched: what an attacker controls is refused early. */
  #inspect(token: string): JWTPayload {
    let header: ReturnType<typeof decodeProtectedHeader>;
    let claims: JWTPayload;
    try {
      header = decodeProtectedHeader(token);
      claims = decodeJwt(token);
    } catch (error) {
      throw new TokenRejected("malformed", "the bearer token is not a well-formed JWT", { cause: error });
    }
    if (typeof header.alg !== "string" || !ACCEPTED_ALGORITHMS.includes(header.alg)) {
      throw new TokenRejected("unsupported_algorithm", `algorithm ${String(header.alg)} is not accepted`);
    }
    const embedded = KEY_BEARING_HEADERS.filter((name) => name in header);
    if (embedded.length > 0) {
      throw new TokenRejected(
        "embedded_key",
        `the token header carries key material (${embedded.join(", ")})`,
      );
    }
    if (typeof claims.iss !== "string")
      throw new TokenRejected("missing_claim", 'the token has no "iss" claim');
    return claims;
  }
}

/**
 * The DPoP key thumbprint a token is bound to (`cnf.jkt`, RFC 9449 section 6.1), or undefined for an unbound token.
 * Every member of `cnf` is a confirmation method (RFC 7800), so a token also (or only) bound some other way, e.g. to
 * a TLS client certificate (`x5t#S256`), is refused: ignoring a binding the gateway cannot check would turn a
 * sender-constrained token back into a bearer token.
 */
function dpopKeyOf(payload: JWTPayload): string | undefined {
  const cnf = payload.cnf;
  if (cnf === undefined) return undefined;
  if (typeof cnf !== "object" || cnf === null || Array.isArray(cnf)) {
    throw new TokenRejected("malformed", 'claim "cnf" is not an object');
  }
  const methods = Object.keys(cnf);
  const jkt = (cnf as { jkt?: unknown }).jkt;
  if (methods.length !== 1 || typeof jkt !== "string" || jkt === "") {
    throw new TokenRejected(
      "unsupported_binding",
      `the token is bound by cnf (${methods.join(", ") || "empty"}); this gateway checks only a DPoP key (cnf.jkt)`,
    );
  }
  return jkt;
}

function rejectionFor(error: unknown): TokenRejected {
  if (error instanceof errors.JWTExpired)
    return new TokenRejected("expired", "the token has expired", { cause: error });
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf" || error.claim === "iat") {
      return new TokenRejected("not_yet_valid", "the token is not valid yet", { cause: error });
    }
    if (error.claim === "aud")
      return new TokenRejected("wrong_audience", "the token is not for this gateway", { cause: error });
    if (error.reason === "missing") {
      return new TokenRejected("missing_claim", `the token has no "${error.claim}" claim`, { cause: error });
    }
    return new TokenRejected("malformed", `claim "${error.claim}" is invalid`, { cause: error });
  }
  if (error instanceof errors.JWKSNoMatchingKey) {
    return new TokenRejected("unknown_key", "no key of the provider matches the token", { cause: error });
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return new TokenRejected("bad_signature", "the token signature does not verify", { cause: error });
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return new TokenRejected("unsupported_algorithm", "the token algorithm is not accepted", {
      cause: error,
    });
  }
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return new TokenRejected("jwks_unavailable", "the identity provider's keys could not be fetched", {
      cause: error,
    });
  }
  if (error instanceof errors.JOSEError)
    return new TokenRejected("malformed", error.message, { cause: error });
  // A network failure fetching the JWKS: refuse (never fail open), and say it was not the caller's fault.
  return new TokenRejected("jwks_unavailable", "the identity provider's keys could not be fetched", {
    cause: error,
  });
}
