// A DPoP client key (RFC 9449) for tests: an ES256 key pair generated per test run, making proofs with jose exactly
// as a client library would, with overrides for the proofs a test wants to be wrong.
import { createHash, randomUUID } from "node:crypto";
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

export interface ProofOptions {
  htm: string;
  htu: string;
  /** The access token the proof is for: sets ath = base64url(SHA-256(token)). */
  accessToken?: string;
  /** Claims to set or replace (undefined removes one), e.g. `{ ath: "…" }`. */
  claims?: Record<string, unknown>;
}

export class DpopKey {
  readonly #privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** RFC 7638 thumbprint of the public key: what a token bound to this key carries as cnf.jkt. */
  readonly thumbprint: string;

  private constructor(privateKey: CryptoKey, publicJwk: JWK, thumbprint: string) {
    this.#privateKey = privateKey;
    this.publicJwk = publicJwk;
    this.thumbprint = thumbprint;
  }

  static async generate(): Promise<DpopKey> {
    const { privateKey, publicKey } = await generateKeyPair("ES256");
    const publicJwk = await exportJWK(publicKey);
    return new DpopKey(privateKey, publicJwk, await calculateJwkThumbprint(publicJwk));
  }

  /** A fresh proof (new jti, iat now) for one request. */
  proof({ htm, htu, accessToken, claims = {} }: ProofOptions): Promise<string> {
    const payload: Record<string, unknown> = {
      htm,
      htu,
      jti: randomUUID(),
      iat: Math.floor(Date.now() / 1000),
      ...(accessToken === undefined ? {} : { ath: athOf(accessToken) }),
      ...claims,
    };
    return new SignJWT(payload)
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: this.publicJwk })
      .sign(this.#privateKey);
  }
}

/** RFC 9449 section 4.2: ath is the base64url SHA-256 of the access token's ASCII bytes. */
export function athOf(accessToken: string): string {
  return createHash("sha256").update(accessToken).digest("base64url");
}
