import {
  InvalidClientError,
  InvalidRequestError,
  OAuthError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { jwtVerify } from "jose";
import { authenticateClient } from "./client-auth.ts";
import { OAUTH_PATHS, type OAuthServerContext, oauthErrorResponse, readForm } from "./server-context.ts";

/**
 * RFC 7009 revocation. A refresh token revokes its whole grant (refresh chain and access tokens); an access
 * token is revoked by its jti. Unknown tokens, or tokens of another client, are answered 200 and left alone.
 */
export function installRevocation(app: Hono, context: OAuthServerContext): void {
  app.post(OAUTH_PATHS.revocation, bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    try {
      const form = await readForm(c);
      if (!form?.token) throw new InvalidRequestError("token is required");
      const client = authenticateClient(c, form, context);
      const grant = context.grants.findRefresh(form.token);
      if (grant) {
        if (grant.clientId === client.client_id) {
          await context.grants.revokeGrant(grant.grantId, context.config.access_token_ttl * 1000);
        }
      } else {
        try {
          const { payload } = await jwtVerify(form.token, context.key.publicKey, {
            issuer: context.issuer,
            algorithms: [context.key.alg],
          });
          if (payload.client_id === client.client_id && payload.jti && payload.exp) {
            await context.grants.revokeAccessToken(payload.jti, payload.exp * 1000);
          }
        } catch {
          // Not one of our live tokens: nothing to revoke (RFC 7009 §2.2).
        }
      }
      c.header("Cache-Control", "no-store");
      return c.body(null, 200);
    } catch (error) {
      if (error instanceof InvalidClientError) return oauthErrorResponse(c, error, 401);
      if (error instanceof OAuthError) return oauthErrorResponse(c, error);
      throw error;
    }
  });
}
