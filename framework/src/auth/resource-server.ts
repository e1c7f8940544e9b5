import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { ApiKeyConfig } from "./config.ts";
import { type AuthRequestContext, runWithAuthContext } from "./context.ts";
import type { TokenMechanism } from "./mechanism.ts";

// Resource-server behaviour of the MCP authorization spec: RFC 9728 metadata, RFC 6750 bearer challenges,
// 401 for a missing or invalid token, 403 insufficient_scope for a valid token lacking scopes.

declare module "hono" {
  interface ContextVariableMap {
    /** Set by the auth guard when the request carries a validated token. */
    authInfo: AuthInfo;
  }
}

const WELL_KNOWN = "/.well-known/oauth-protected-resource";

/** RFC 9728 §3.1: the metadata URL inserts the well-known segment between the host and the resource's path. */
export function protectedResourceMetadataUrl(resource: URL, publicUrl: URL): URL {
  const path = resource.pathname === "/" ? "" : resource.pathname.replace(/\/$/, "");
  return new URL(`${WELL_KNOWN}${path}`, publicUrl);
}

/** The bearer token of an Authorization header: undefined when absent, null when the header is not Bearer. */
export function bearerToken(header: string | undefined): string | undefined | null {
  if (header === undefined || header.trim() === "") return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match?.[1] ?? null;
}

/** The API key of the configured header, its prefix stripped; undefined when absent or empty. */
export function apiKeyOf(c: Context, apiKey: ApiKeyConfig | undefined): string | undefined {
  if (!apiKey) return undefined;
  let value = c.req.header(apiKey.header_name)?.trim();
  const prefix = apiKey.header_prefix;
  if (value !== undefined && prefix) {
    // Case-insensitive, so "bearer abc" and "Bearer abc" both lose their prefix.
    if (value.toLowerCase().startsWith(prefix.toLowerCase())) value = value.slice(prefix.length).trim();
  }
  return value ? value : undefined;
}

const quoted = (value: string): string => `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;

/** The one place an auth failure becomes an HTTP response. */
function challenge(
  c: Context,
  status: 401 | 403,
  params: { error?: string; description?: string; scope?: string[]; metadataUrl: URL },
): Response {
  const parts: string[] = [];
  if (params.error) parts.push(`error=${quoted(params.error)}`);
  if (params.description) parts.push(`error_description=${quoted(params.description)}`);
  if (params.scope && params.scope.length > 0) parts.push(`scope=${quoted(params.scope.join(" "))}`);
  parts.push(`resource_metadata=${quoted(params.metadataUrl.href)}`);
  c.header("WWW-Authenticate", `Bearer ${parts.join(", ")}`);
  c.header("Cache-Control", "no-store");
  const body = params.error
    ? { error: params.error, error_description: params.description ?? params.error }
    : { error: "unauthorized", error_description: "a bearer token is required" };
  return c.json(body, status);
}

export interface ResourceServerOptions {
  mechanism: TokenMechanism;
  resource: URL;
  /** Advertised as `resource`, verbatim. */
  resourceIdentifier: string;
  publicUrl: URL;
  apiKey?: ApiKeyConfig;
}

/** Routes serving the RFC 9728 protected-resource metadata (path-specific and root). */
export function installProtectedResourceMetadata(app: Hono, options: ResourceServerOptions): void {
  const { mechanism, resource } = options;
  const metadata: OAuthProtectedResourceMetadata = {
    resource: options.resourceIdentifier,
    bearer_methods_supported: ["header"],
    ...(mechanism.authorizationServers.length > 0
      ? { authorization_servers: mechanism.authorizationServers }
      : {}),
    ...(mechanism.scopesSupported ? { scopes_supported: mechanism.scopesSupported } : {}),
    ...(mechanism.resourceDocumentation ? { resource_documentation: mechanism.resourceDocumentation } : {}),
  };
  const path = protectedResourceMetadataUrl(resource, options.publicUrl).pathname;
  const serve = (c: Context) => c.json(metadata);
  // Public metadata that browser-based clients read cross-origin.
  for (const route of path === WELL_KNOWN ? [path] : [path, WELL_KNOWN]) {
    app.use(route, cors({ origin: "*", allowHeaders: ["mcp-protocol-version"] }));
    app.get(route, serve);
  }
}

/** The /mcp guard for a token mechanism. */
export function createTokenGuard(options: ResourceServerOptions): MiddlewareHandler {
  const { mechanism, apiKey } = options;
  const metadataUrl = protectedResourceMetadataUrl(options.resource, options.publicUrl);
  const required = mechanism.requiredScopes;
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    if (token === undefined) return challenge(c, 401, { metadataUrl, scope: required });
    if (token === null) {
      return challenge(c, 401, {
        error: "invalid_token",
        description: "the Authorization header must be 'Bearer <token>'",
        metadataUrl,
      });
    }
    let info: AuthInfo;
    try {
      info = await mechanism.verifier.verify(token);
    } catch (error) {
      const description = error instanceof InvalidTokenError ? error.message : "token could not be verified";
      return challenge(c, 401, { error: "invalid_token", description, metadataUrl });
    }
    const missing = required.filter((scope) => !info.scopes.includes(scope));
    if (missing.length > 0) {
      return challenge(c, 403, {
        error: "insufficient_scope",
        description: `token lacks the required scope(s): ${missing.join(" ")}`,
        scope: required,
        metadataUrl,
      });
    }
    c.set("authInfo", info);
    const key = apiKeyOf(c, apiKey);
    const context: AuthRequestContext =
      key === undefined ? { token, authInfo: info } : { token, authInfo: info, apiKey: key };
    await runWithAuthContext(context, () => next());
  };
}

/** The guard when no token mechanism is configured: no authentication, only the request context. */
export function createContextOnlyGuard(apiKey: ApiKeyConfig | undefined): MiddlewareHandler {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization")) ?? undefined;
    const key = apiKeyOf(c, apiKey);
    const context: AuthRequestContext = {
      ...(token === undefined ? {} : { token }),
      ...(key === undefined ? {} : { apiKey: key }),
    };
    await runWithAuthContext(context, () => next());
  };
}
