import type { OAuthMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Hono } from "hono";
import { TOKEN_ENDPOINT_AUTH_METHODS } from "./client-store.ts";
import { endpointUrl, OAUTH_PATHS, type OAuthServerContext } from "./server-context.ts";

/** RFC 8414 metadata, served at /.well-known/oauth-authorization-server plus the issuer's path; and the JWKS. */
export function installMetadata(app: Hono, context: OAuthServerContext): void {
  const metadata: OAuthMetadata & Record<string, unknown> = {
    issuer: context.issuer,
    authorization_endpoint: endpointUrl(context, OAUTH_PATHS.authorization),
    token_endpoint: endpointUrl(context, OAUTH_PATHS.token),
    registration_endpoint: endpointUrl(context, OAUTH_PATHS.registration),
    revocation_endpoint: endpointUrl(context, OAUTH_PATHS.revocation),
    jwks_uri: endpointUrl(context, OAUTH_PATHS.jwks),
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    ...(context.config.valid_scopes.length > 0 ? { scopes_supported: context.config.valid_scopes } : {}),
    ...(context.config.service_documentation_url
      ? { service_documentation: context.config.service_documentation_url }
      : {}),
  };
  const issuerPath = new URL(context.issuer).pathname.replace(/\/$/, "");
  const jwks = { keys: [context.key.publicJwk] };
  app.get(`/.well-known/oauth-authorization-server${issuerPath}`, (c) => {
    return c.json(metadata);
  });
  app.get(OAUTH_PATHS.jwks, (c) => {
    return c.json(jwks);
  });
}
