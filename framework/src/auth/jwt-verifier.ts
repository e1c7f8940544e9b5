import { createPublicKey, type KeyObject } from "node:crypto";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { createRemoteJWKSet, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from "jose";
import { ASYMMETRIC_ALGORITHMS, type AsymmetricAlgorithm } from "./config.ts";
import { AuthConfigError } from "./errors.ts";
import { authInfoFromJwt, type TokenVerifier } from "./token-verifier.ts";

/** Where a JWT's signing keys come from: a remote JWKS (cached) or one public key. */
export type KeySource =
  | { kind: "jwks"; url: URL; where: string }
  | { kind: "pem"; pem: string; where: string };

export interface JwtVerifierOptions {
  keys: KeySource;
  issuer: string;
  audiences: string[];
  algorithms?: readonly AsymmetricAlgorithm[];
  /** Set on AuthInfo.resource. */
  resource?: URL;
}

// A JWKS is refetched at most every 10 minutes, or sooner (30 s cooldown) when a token names an unknown kid.
const JWKS_CACHE_MAX_AGE_MS = 10 * 60_000;
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 5_000;
const CLOCK_TOLERANCE_S = 5;

/** A cached remote JWKS, fetched once now so an unreachable or empty JWKS stops the server at start. */
export async function loadRemoteJwks(url: URL, where: string): Promise<JWTVerifyGetKey> {
  const jwks = createRemoteJWKSet(url, {
    cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
    cooldownDuration: JWKS_COOLDOWN_MS,
    timeoutDuration: JWKS_TIMEOUT_MS,
  });
  try {
    await jwks.reload();
  } catch (error) {
    throw new AuthConfigError(where, `could not load a JWKS from ${url.href}: ${(error as Error).message}`);
  }
  const usable = (jwks.jwks()?.keys ?? []).filter(
    (key) => key.kty === "RSA" || key.kty === "EC" || key.kty === "OKP",
  );
  if (usable.length === 0) {
    throw new AuthConfigError(where, `the JWKS at ${url.href} holds no asymmetric (RSA, EC, OKP) public key`);
  }
  return jwks;
}

/** Algorithms a public key can verify; jose also checks this, but narrowing keeps "alg" confusion impossible. */
function algorithmsForKey(key: KeyObject): AsymmetricAlgorithm[] {
  switch (key.asymmetricKeyType) {
    case "rsa":
      return ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"];
    case "rsa-pss":
      return ["PS256", "PS384", "PS512"];
    case "ec": {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === "prime256v1") return ["ES256"];
      if (curve === "secp384r1") return ["ES384"];
      if (curve === "secp521r1") return ["ES512"];
      return [];
    }
    case "ed25519":
      return ["EdDSA", "Ed25519"];
    default:
      return [];
  }
}

/** Parses a PEM public key (SPKI or certificate). Private keys are refused: they do not belong here. */
export function parsePublicKeyPem(pem: string, where: string): KeyObject {
  // Environment files often carry PEM blocks with literal "\n".
  const text = pem.includes("\\n") ? pem.replaceAll("\\n", "\n") : pem;
  if (!/-----BEGIN (PUBLIC KEY|CERTIFICATE|RSA PUBLIC KEY)-----/.test(text)) {
    throw new AuthConfigError(
      where,
      "must hold a PEM public key (-----BEGIN PUBLIC KEY-----); private keys are refused",
    );
  }
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch (error) {
    throw new AuthConfigError(where, `is not a valid PEM public key: ${(error as Error).message}`);
  }
  if (algorithmsForKey(key).length === 0) {
    throw new AuthConfigError(where, `key type ${key.asymmetricKeyType ?? "unknown"} is not supported`);
  }
  return key;
}

/** Verifies JWT access tokens: signature (asymmetric only), exp/nbf, issuer, audience. */
export async function createJwtVerifier(options: JwtVerifierOptions): Promise<TokenVerifier> {
  let key: JWTVerifyGetKey | KeyObject;
  let algorithms: AsymmetricAlgorithm[] = [...(options.algorithms ?? ASYMMETRIC_ALGORITHMS)];
  if (options.keys.kind === "jwks") {
    key = await loadRemoteJwks(options.keys.url, options.keys.where);
  } else {
    const publicKey = parsePublicKeyPem(options.keys.pem, options.keys.where);
    const fitting = algorithmsForKey(publicKey);
    algorithms = algorithms.filter((alg) => fitting.includes(alg));
    if (algorithms.length === 0) {
      throw new AuthConfigError(options.keys.where, "the key fits none of the configured algorithms");
    }
    key = publicKey;
  }
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.audiences,
    algorithms,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ["exp"],
  };
  return {
    async verify(token) {
      try {
        const { payload } =
          key instanceof Function
            ? await jwtVerify(token, key, verifyOptions)
            : await jwtVerify(token, key, verifyOptions);
        return authInfoFromJwt(token, payload, options.resource);
      } catch (error) {
        throw new InvalidTokenError(describeJwtFailure(error));
      }
    },
  };
}

/** A short reason for the 401's error_description; never echoes the token. */
export function describeJwtFailure(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return "token expired";
  if (error instanceof joseErrors.JWTClaimValidationFailed)
    return `token ${error.claim} claim is not accepted`;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return "token signing algorithm is not accepted";
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return "token signature is invalid";
  if (error instanceof joseErrors.JWKSNoMatchingKey) return "token signing key is unknown";
  if (error instanceof joseErrors.JWTInvalid || error instanceof joseErrors.JWSInvalid)
    return "token is malformed";
  return "token is invalid";
}
