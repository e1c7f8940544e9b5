/**
 * Why an access token was refused. The reason is logged and audited; the client learns `invalid_token`, or
 * `invalid_dpop_proof` when the DPoP proof is at fault (RFC 9449 section 7.1).
 */
export type RejectionReason =
  | "missing"
  | "malformed"
  | "unsupported_algorithm"
  | "embedded_key"
  | "untrusted_issuer"
  | "bad_signature"
  | "unknown_key"
  | "expired"
  | "not_yet_valid"
  | "wrong_audience"
  /** A token of the gateway's own authorization server whose grant was revoked (RFC 7009, refresh-token reuse). */
  | "revoked"
  | "missing_claim"
  /** A valid token from another identity provider than the one the server names (`idp`). */
  | "wrong_provider"
  | "jwks_unavailable"
  /** The token is bound (cnf) by a method other than a DPoP key thumbprint: a binding the gateway cannot check. */
  | "unsupported_binding"
  /** DPoP binding (RFC 9449): a bound token sent as Bearer, an unbound one sent as DPoP, or a proof by another key. */
  | "dpop_binding"
  /** A DPoP proof missing, not verifying, or not made for this request or this access token (ath). */
  | "invalid_dpop_proof";

export class TokenRejected extends Error {
  override readonly name = "TokenRejected";
  readonly reason: RejectionReason;

  constructor(reason: RejectionReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}
