import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { jwtVerify, SignJWT } from "jose";
import { describeJwtFailure } from "../jwt-verifier.ts";
import { authInfoFromJwt, type TokenVerifier } from "../token-verifier.ts";
import { randomToken } from "./grant-store.ts";
import type { OAuthServerContext } from "./server-context.ts";

export interface AccessTokenClaims {
  subject: string;
  clientId: string;
  scopes: string[];
  resource: string;
  grantId: string;
}

/** Signs an RFC 9068 JWT access token for `resource`. */
export async function issueAccessToken(
  context: OAuthServerContext,
  claims: AccessTokenClaims,
): Promise<string> {
  return new SignJWT({ client_id: claims.clientId, scope: claims.scopes.join(" "), gid: claims.grantId })
    .setProtectedHeader({ alg: context.key.alg, kid: context.key.kid, typ: "at+jwt" })
    .setIssuer(context.issuer)
    .setSubject(claims.subject)
    .setAudience(claims.resource)
    .setIssuedAt()
    .setExpirationTime(`${context.config.access_token_ttl}s`)
    .setJti(randomToken())
    .sign(context.key.privateKey);
}

/** Verifies this server's own access tokens: signature, typ, issuer, audience, expiry, not revoked. */
export function createOwnTokenVerifier(context: OAuthServerContext): TokenVerifier {
  const publicKey = context.key.publicKey;
  return {
    async verify(token) {
      let payload: Awaited<ReturnType<typeof jwtVerify>>["payload"];
      try {
        ({ payload } = await jwtVerify(token, publicKey, {
          issuer: context.issuer,
          audience: context.resource.href,
          algorithms: [context.key.alg],
          typ: "at+jwt",
          requiredClaims: ["exp", "jti", "sub"],
        }));
      } catch (error) {
        throw new InvalidTokenError(describeJwtFailure(error));
      }
      const grantId = typeof payload.gid === "string" ? payload.gid : undefined;
      if (context.grants.isRevoked(grantId, payload.jti))
        throw new InvalidTokenError("token has been revoked");
      return authInfoFromJwt(token, payload, context.resource);
    },
  };
}
