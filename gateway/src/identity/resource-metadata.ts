import type { GatewayConfig } from "../config/index.ts";
import { GATEWAY_SCOPE } from "../oauth/gateway-scope.ts";
import { ACCEPTED_ALGORITHMS } from "./token-verifier.ts";

/** RFC 9728 protected-resource metadata, as served at /.well-known/oauth-protected-resource[/{server}/mcp]. */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers: string[];
  scopes_supported: string[];
  bearer_methods_supported: ["header"];
  /** Proof algorithms for DPoP-bound tokens (RFC 9728 section 2), which the gateway accepts (docs/access.md). */
  dpop_signing_alg_values_supported: string[];
  resource_name?: string;
}

/**
 * The origin of the gateway's public URL. A Host header that is not a valid authority (possible when the gateway is
 * not bound to loopback, where Host is not checked) yields "", so links become paths: the caller still gets its 401
 * or its metadata instead of a 500.
 */
function originOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return "";
  }
}

/** Where the metadata for a resource lives: the well-known prefix inserted before the resource's path (RFC 9728 3.1). */
export function resourceMetadataUrl(baseUrl: string, server?: string): string {
  const origin = originOf(baseUrl);
  return server === undefined
    ? `${origin}/.well-known/oauth-protected-resource`
    : `${origin}/.well-known/oauth-protected-resource/${encodeURIComponent(server)}/mcp`;
}

/**
 * The gateway's own authorization server first when `oauth_server` is on (an MCP client uses the first one listed,
 * and only that one offers Dynamic Client Registration), then the identity providers' issuers — for a server with an
 * `idp`, only that provider's. The gateway requires no scopes of its own; scopes_supported names the scope its own
 * authorization server grants, so MCP clients ask for it.
 */
export function protectedResourceMetadata(
  config: GatewayConfig,
  baseUrl: string,
  server?: string,
): ProtectedResourceMetadata {
  const origin = originOf(baseUrl);
  const target = server === undefined ? undefined : config.servers.find((s) => s.name === server);
  const providers =
    target?.idp === undefined
      ? config.identity_providers
      : config.identity_providers.filter((p) => p.name === target.idp);
  const authorizationServers = providers.map((p) => p.issuer);
  if (config.oauth_server !== undefined) authorizationServers.unshift(oauthIssuerOf(config, baseUrl));
  return {
    resource: server === undefined ? origin : `${origin}/${encodeURIComponent(server)}/mcp`,
    authorization_servers: [...new Set(authorizationServers)],
    scopes_supported: config.oauth_server === undefined ? [] : [GATEWAY_SCOPE],
    bearer_methods_supported: ["header"],
    dpop_signing_alg_values_supported: [...ACCEPTED_ALGORITHMS],
    ...(target?.description ? { resource_name: target.description } : {}),
  };
}

/** The gateway's own issuer: oauth_server.issuer, else the gateway's public URL, as an origin. */
export function oauthIssuerOf(config: GatewayConfig, baseUrl: string): string {
  return originOf(config.oauth_server?.issuer ?? baseUrl);
}
