/** Why a bearer token was refused. The reason is logged and audited; the client only learns `invalid_token`. */
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
  | "missing_claim"
  | "jwks_unavailable";

export class TokenRejected extends Error {
  override readonly name = "TokenRejected";
  readonly reason: RejectionReason;

  constructor(reason: RejectionReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}
