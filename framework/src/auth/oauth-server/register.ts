import {
  InvalidClientMetadataError,
  TemporarilyUnavailableError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { OAuthClientMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { LOOPBACK_HOSTS } from "../env.ts";
import { MAX_CLIENTS, TOKEN_ENDPOINT_AUTH_METHODS, type TokenEndpointAuthMethod } from "./client-store.ts";
import { OAUTH_PATHS, type OAuthServerContext, oauthErrorResponse } from "./server-context.ts";

const SUPPORTED_GRANTS = ["authorization_code", "refresh_token"];
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:"]);

/** Redirect URIs: https, http only on loopback (RFC 8252 native apps), or a private-use scheme; no fragment. */
function checkRedirectUri(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `redirect_uri "${value}" is not a URL`;
  }
  if (url.hash) return `redirect_uri "${value}" must not contain a fragment`;
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `redirect_uri scheme ${url.protocol} is not allowed`;
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) {
    return `redirect_uri "${value}" must use https (http is allowed only for loopback addresses)`;
  }
  return undefined;
}

/** RFC 7591 dynamic client registration. */
export function installRegistration(app: Hono, context: OAuthServerContext): void {
  app.post(OAUTH_PATHS.registration, bodyLimit({ maxSize: 16 * 1024 }), async (c) => {
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return oauthErrorResponse(c, new InvalidClientMetadataError("the body must be a JSON object"));
    }
    const parsed = OAuthClientMetadataSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.join(".") || "body";
      return oauthErrorResponse(
        c,
        new InvalidClientMetadataError(`${where}: ${issue?.message ?? "invalid"}`),
      );
    }
    const metadata = parsed.data;
    const method = (metadata.token_endpoint_auth_method ?? "client_secret_basic") as TokenEndpointAuthMethod;
    const grantTypes = metadata.grant_types ?? ["authorization_code", "refresh_token"];
    const responseTypes = metadata.response_types ?? ["code"];
    const requestedScopes = metadata.scope?.split(" ").filter(Boolean) ?? [];
    const problem =
      (metadata.redirect_uris.length === 0 ? "redirect_uris must list at least one URI" : undefined) ??
      metadata.redirect_uris.map(checkRedirectUri).find(Boolean) ??
      (TOKEN_ENDPOINT_AUTH_METHODS.includes(method)
        ? undefined
        : `token_endpoint_auth_method must be one of ${TOKEN_ENDPOINT_AUTH_METHODS.join(", ")}`) ??
      (grantTypes.every((grant) => SUPPORTED_GRANTS.includes(grant)) &&
      grantTypes.includes("authorization_code")
        ? undefined
        : "grant_types must include authorization_code and may add refresh_token only") ??
      (responseTypes.every((type) => type === "code")
        ? undefined
        : 'response_types may only contain "code"') ??
      requestedScopes
        .filter((scope) => !context.config.valid_scopes.includes(scope))
        .map((scope) => `scope "${scope}" is not one of valid_scopes`)[0];
    if (problem) return oauthErrorResponse(c, new InvalidClientMetadataError(problem));
    if (context.clients.size >= MAX_CLIENTS) {
      return oauthErrorResponse(c, new TemporarilyUnavailableError("registration limit reached"), 503);
    }
    const { client, secret } = await context.clients.register({
      redirect_uris: metadata.redirect_uris.map(String),
      grant_types: grantTypes,
      response_types: responseTypes,
      token_endpoint_auth_method: method,
      ...(metadata.client_name ? { client_name: metadata.client_name } : {}),
      ...(metadata.client_uri ? { client_uri: String(metadata.client_uri) } : {}),
      ...(requestedScopes.length > 0 ? { scope: requestedScopes.join(" ") } : {}),
    });
    const { client_secret_sha256: _digest, ...visible } = client;
    c.header("Cache-Control", "no-store");
    return c.json({ ...visible, ...(secret ? { client_secret: secret } : {}) }, 201);
  });
}
