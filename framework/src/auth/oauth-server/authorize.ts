import { InvalidClientError, InvalidRequestError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { checkResourceAllowed } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import type { Context, Hono } from "hono";
import { OAUTH_PATHS, type OAuthServerContext, oauthErrorResponse, readForm } from "./server-context.ts";

const CODE_CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Sends the user agent back to the client with `params` (RFC 6749 §4.1.2, RFC 9207 `iss`). */
function redirectBack(c: Context, redirectUri: string, params: Record<string, string | undefined>): Response {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  c.header("Cache-Control", "no-store");
  return c.redirect(url.href, 302);
}

/** The authorization endpoint: authorization code with PKCE S256 only, then the pluggable approval step. */
export function installAuthorization(app: Hono, context: OAuthServerContext): void {
  const handle = async (c: Context, params: Record<string, string>) => {
    // Until client and redirect URI are known good, errors are shown here, never redirected (RFC 6749 §4.1.2.1).
    const client = params.client_id ? context.clients.get(params.client_id) : undefined;
    if (!client) return oauthErrorResponse(c, new InvalidClientError("unknown or missing client_id"));
    let redirectUri = params.redirect_uri;
    if (redirectUri === undefined && client.redirect_uris.length === 1) redirectUri = client.redirect_uris[0];
    if (redirectUri === undefined || !client.redirect_uris.includes(redirectUri)) {
      return oauthErrorResponse(
        c,
        new InvalidRequestError("redirect_uri is missing or not registered for this client"),
      );
    }
    const fail = (error: string, description: string) =>
      redirectBack(c, redirectUri, {
        error,
        error_description: description,
        state: params.state,
        iss: context.issuer,
      });

    if (params.response_type !== "code")
      return fail("unsupported_response_type", 'response_type must be "code"');
    if (params.code_challenge_method !== "S256" || !CODE_CHALLENGE.test(params.code_challenge ?? "")) {
      return fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256");
    }
    const requested = params.scope?.split(" ").filter(Boolean) ??
      client.scope?.split(" ") ?? [...context.config.default_scopes];
    // Within valid_scopes, and within what the client registered when it registered a scope (RFC 7591).
    const allowed = client.scope?.split(" ") ?? context.config.valid_scopes;
    const unknown = requested.filter(
      (scope) => !context.config.valid_scopes.includes(scope) || !allowed.includes(scope),
    );
    if (unknown.length > 0) return fail("invalid_scope", `unknown scope(s): ${unknown.join(" ")}`);
    if (params.resource !== undefined) {
      let allowed = false;
      try {
        allowed = checkResourceAllowed({
          requestedResource: params.resource,
          configuredResource: context.resource,
        });
      } catch {
        allowed = false;
      }
      if (!allowed)
        return fail("invalid_target", `this server issues tokens only for ${context.resource.href}`);
    }

    const decision = await context.approve(
      {
        clientId: client.client_id,
        ...(client.client_name ? { clientName: client.client_name } : {}),
        redirectUri,
        scopes: requested,
        resource: context.resource.href,
      },
      c.req.raw,
    );
    if (decision instanceof Response) return decision;
    if (!decision.approved) return fail("access_denied", decision.reason ?? "the user denied the request");
    // The hook may narrow the scopes, never widen them.
    const scopes = decision.scopes
      ? requested.filter((scope) => decision.scopes?.includes(scope))
      : requested;
    const code = context.grants.issueCode({
      clientId: client.client_id,
      redirectUri,
      codeChallenge: params.code_challenge as string,
      scopes,
      resource: context.resource.href,
      subject: decision.subject,
      expiresAt: Date.now() + context.config.authorization_code_ttl * 1000,
    });
    return redirectBack(c, redirectUri, { code, state: params.state, iss: context.issuer });
  };

  app.get(OAUTH_PATHS.authorization, (c) => handle(c, c.req.query()));
  // POST is what a consent page submits back.
  app.post(OAUTH_PATHS.authorization, async (c) => {
    const form = await readForm(c);
    if (!form) return oauthErrorResponse(c, new InvalidRequestError("expected a form-encoded body"));
    return handle(c, form);
  });
}
