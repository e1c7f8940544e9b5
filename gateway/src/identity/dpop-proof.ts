// DPoP proofs (RFC 9449 section 4.3), verified in this one place for both of their uses: proving possession of the
// key a DPoP-bound access token is bound to (authentication, authenticate.ts) and spending the proof's jti once
// (replay protection, limits/replay-guard.ts). Stateless: remembering spent proofs is the replay guard's job.
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from "jose";
import { TokenRejected } from "./token-rejected.ts";
import { ACCEPTED_ALGORITHMS } from "./token-verifier.ts";

/** How long a DPoP proof's iat may differ from now, in either direction (RFC 9449 leaves it to the server). */
export const DPOP_WINDOW_SECONDS = 300;

/** What a verified proof tells the later checks. */
export interface DpopProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's public key: what a bound token's cnf.jkt must equal. */
  thumbprint: string;
  jti: string;
  /** base64url(SHA-256(access token)) the proof was made for, when it names one. */
  ath: string | undefined;
}

/**
 * Verifies a proof for this request: typ `dpop+jwt`, an asymmetric alg, the signature by the public key it embeds
 * (a private or symmetric key is refused by jose), htm, htu (without query and fragment), iat within the window,
 * a jti. Rejects with TokenRejected `invalid_dpop_proof` saying what is wrong; `proof` undefined = no DPoP header.
 */
export async function verifyDpopProof(
  proof: string | undefined,
  method: string,
  url: string,
  nowMs: number,
): Promise<DpopProof> {
  if (proof === undefined || proof === "") throw invalid("no DPoP proof was sent (DPoP header)");
  let payload: Record<string, unknown>;
  let thumbprint: string;
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, {
      typ: "dpop+jwt",
      algorithms: ACCEPTED_ALGORITHMS,
    });
    payload = verified.payload;
    if (verified.protectedHeader.jwk === undefined) throw invalid("the proof carries no jwk");
    thumbprint = await calculateJwkThumbprint(verified.protectedHeader.jwk);
  } catch (error) {
    if (error instanceof TokenRejected) throw error;
    throw invalid(`the DPoP proof does not verify: ${(error as Error).message}`, error);
  }
  if (payload.htm !== method) throw invalid(`htm is ${String(payload.htm)}, the request is ${method}`);
  if (typeof payload.htu !== "string" || stripQuery(payload.htu) !== stripQuery(url)) {
    throw invalid("htu does not match the request URL");
  }
  const iat = typeof payload.iat === "number" ? payload.iat : Number.NaN;
  if (!(Math.abs(nowMs / 1000 - iat) <= DPOP_WINDOW_SECONDS))
    throw invalid("iat is outside the accepted window");
  if (typeof payload.jti !== "string" || payload.jti === "") throw invalid("the proof has no jti");
  if (payload.ath !== undefined && typeof payload.ath !== "string") throw invalid("ath is not a string");
  return { thumbprint, jti: payload.jti, ath: payload.ath };
}

function invalid(message: string, cause?: unknown): TokenRejected {
  return new TokenRejected("invalid_dpop_proof", message, cause === undefined ? undefined : { cause });
}

/** RFC 9449: htu is compared without query and fragment. */
function stripQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url;
  }
}
