import { createHash, timingSafeEqual } from "node:crypto";
import {
  InvalidClientError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  OAuthError,
  UnauthorizedClientError,
  UnsupportedGrantTypeError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { issueAccessToken } from "./access-token.ts";
import { authenticateClient } from "./client-auth.ts";
import type { StoredClient } from "./client-store.ts";
import { OAUTH_PATHS, type OAuthServerContext, oauthErrorResponse, readForm } from "./server-context.ts";

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(verifier)) equals the challenge. */
function pkceMatches(verifier: string, challenge: string): boolean {
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

interface Issued {
  subject: string;
  clientId: string;
  scopes: string[];
  resource: string;
  grantId: string;
}

async function tokenResponse(c: Context, context: OAuthServerContext, client: StoredClient, issued: Issued) {
  const accessToken = await issueAccessToken(context, issued);
  const refreshToken = client.grant_types.includes("refresh_token")
    ? await context.grants.issueRefresh({
        ...issued,
        expiresAt: Date.now() + context.config.refresh_token_ttl * 1000,
      })
    : undefined;
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
  return c.json({
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: context.config.access_token_ttl,
    scope: issued.scopes.join(" "),
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
  });
}

function checkResourceParam(form: Record<string, string>, resource: string): void {
  if (form.resource !== undefined && form.resource !== resource) {
    throw new InvalidTargetError(`tokens are issued only for ${resource}`);
  }
}

async function exchangeCode(
  c: Context,
  context: OAuthServerContext,
  client: StoredClient,
  form: Record<string, string>,
) {
  if (!form.code || !form.code_verifier) throw new InvalidRequestError("code and code_verifier are required");
  const code = await context.grants.takeCode(form.code, context.config.access_token_ttl * 1000);
  if (!code || code.clientId !== client.client_id)
    throw new InvalidGrantError("authorization code is invalid");
  const redirectUri =
    form.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (redirectUri !== code.redirectUri)
    throw new InvalidGrantError("redirect_uri does not match the authorization request");
  if (!pkceMatches(form.code_verifier, code.codeChallenge))
    throw new InvalidGrantError("code_verifier does not match");
  checkResourceParam(form, code.resource);
  return tokenResponse(c, context, client, code);
}

async function refresh(
  c: Context,
  context: OAuthServerContext,
  client: StoredClient,
  form: Record<string, string>,
) {
  if (!form.refresh_token) throw new InvalidRequestError("refresh_token is required");
  const known = context.grants.findRefresh(form.refresh_token);
  if (!known || known.clientId !== client.client_id) throw new InvalidGrantError("refresh token is invalid");
  const grant = await context.grants.takeRefresh(form.refresh_token);
  if (!grant) throw new InvalidGrantError("refresh token is invalid, expired, revoked or already used");
  checkResourceParam(form, grant.resource);
  const requested = form.scope?.split(" ").filter(Boolean);
  if (requested?.some((scope) => !grant.scopes.includes(scope))) {
    throw new InvalidScopeError("a refresh may not add scopes beyond the original grant");
  }
  return tokenResponse(c, context, client, { ...grant, scopes: requested ?? grant.scopes });
}

/** The token endpoint: authorization_code (with PKCE) and refresh_token (rotating) grants. */
export function installToken(app: Hono, context: OAuthServerContext): void {
  app.post(OAUTH_PATHS.token, bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    try {
      const form = await readForm(c);
      if (!form) throw new InvalidRequestError("expected a form-encoded body with single-valued fields");
      const client = authenticateClient(c, form, context);
      if (!form.grant_type || !["authorization_code", "refresh_token"].includes(form.grant_type)) {
        throw new UnsupportedGrantTypeError("grant_type must be authorization_code or refresh_token");
      }
      if (!client.grant_types.includes(form.grant_type)) {
        throw new UnauthorizedClientError(`client is not registered for ${form.grant_type}`);
      }
      return form.grant_type === "authorization_code"
        ? await exchangeCode(c, context, client, form)
        : await refresh(c, context, client, form);
    } catch (error) {
      if (error instanceof InvalidClientError) {
        c.header("WWW-Authenticate", 'Basic realm="token"');
        return oauthErrorResponse(c, error, 401);
      }
      if (error instanceof OAuthError) return oauthErrorResponse(c, error);
      throw error;
    }
  });
}
