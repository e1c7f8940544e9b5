import { discoverAuthorizationServerMetadata } from "@modelcontextprotocol/sdk/client/auth.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { decodeJwt } from "jose";
import type { RemoteAuthConfig } from "./config.ts";
import {
  commaList,
  type Env,
  requireHttpUrl,
  requireSecureUrl,
  resolveSetting,
  settingSource,
} from "./env.ts";
import { AuthConfigError } from "./errors.ts";
import { createJwtVerifier } from "./jwt-verifier.ts";
import type { TokenMechanism } from "./mechanism.ts";
import type { TokenVerifier } from "./token-verifier.ts";

const owner = "RemoteAuthConfig";

/** The trusted authorization servers, from the environment variable or the config. */
function authorizationServerUrls(config: RemoteAuthConfig, env: Env): { urls: URL[]; where: string } {
  const f = config.fields;
  const where = settingSource(env, `${owner}.authorization_servers`, f.authorization_servers_env_var);
  const text = resolveSetting(env, {
    field: `${owner}.authorization_servers`,
    value: f.authorization_servers?.join(","),
    envVar: f.authorization_servers_env_var,
    required: true,
  }) as string;
  const urls = commaList(text).map((value) => requireSecureUrl(where, value, env));
  if (urls.length === 0) throw new AuthConfigError(where, "lists no authorization server");
  return { urls, where };
}

/** One trusted server's issuer and verifier, found through its RFC 8414 / OpenID Connect metadata. */
async function discoverServer(
  url: URL,
  where: string,
  audiences: string[],
  config: RemoteAuthConfig,
  resource: URL,
  env: Env,
) {
  let metadata: Awaited<ReturnType<typeof discoverAuthorizationServerMetadata>>;
  try {
    metadata = await discoverAuthorizationServerMetadata(url, {
      fetchFn: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(5_000) }),
    });
  } catch (error) {
    throw new AuthConfigError(
      where,
      `could not read the metadata of ${url.href}: ${(error as Error).message}`,
    );
  }
  if (!metadata) {
    throw new AuthConfigError(
      where,
      `no RFC 8414 or OpenID Connect metadata could be read from ${url.href} (unreachable, or not an authorization server)`,
    );
  }
  if (!metadata.jwks_uri) {
    throw new AuthConfigError(where, `the metadata of ${url.href} has no jwks_uri`);
  }
  const algorithms = config.fields.token_verifier_config.fields.algorithms;
  const verifier = await createJwtVerifier({
    keys: { kind: "jwks", url: requireSecureUrl(where, String(metadata.jwks_uri), env), where },
    issuer: String(metadata.issuer),
    audiences,
    resource,
    ...(algorithms ? { algorithms } : {}),
  });
  return { issuer: String(metadata.issuer), verifier };
}

/**
 * The Remote mechanism: tokens from any of the listed authorization servers, each checked against that
 * server's own issuer and JWKS (found through its metadata), for this resource's audience.
 */
export async function createRemoteMechanism(
  config: RemoteAuthConfig,
  env: Env,
  defaultResource: URL,
): Promise<TokenMechanism> {
  const f = config.fields;
  const verifierFields = f.token_verifier_config.fields;
  const { urls, where } = authorizationServerUrls(config, env);
  const resourceText = resolveSetting(env, {
    field: `${owner}.resource_server_url`,
    value: f.resource_server_url,
    envVar: f.resource_server_url_env_var,
    required: false,
  });
  const resource = resourceText
    ? requireHttpUrl(
        settingSource(env, `${owner}.resource_server_url`, f.resource_server_url_env_var),
        resourceText,
      )
    : defaultResource;
  const audienceText = resolveSetting(env, {
    field: `${owner}.token_verifier_config.audience`,
    value:
      typeof verifierFields.audience === "string"
        ? verifierFields.audience
        : verifierFields.audience?.join(","),
    envVar: verifierFields.audience_env_var,
    required: false,
  });
  // Without an explicit audience the token must be issued for this resource (RFC 8707 / MCP authorization).
  const resourceIdentifier = resourceText ?? resource.href;
  const audiences = audienceText ? commaList(audienceText) : [resourceIdentifier];

  const servers = await Promise.all(
    urls.map((url) => discoverServer(url, where, audiences, config, resource, env)),
  );
  const byIssuer = new Map(servers.map((server) => [server.issuer, server.verifier]));

  const verifier: TokenVerifier = {
    async verify(token) {
      let issuer: unknown;
      try {
        issuer = decodeJwt(token).iss; // only to pick the server; its verifier checks the signature and issuer
      } catch {
        throw new InvalidTokenError("token is malformed");
      }
      const chosen = typeof issuer === "string" ? byIssuer.get(issuer) : undefined;
      if (!chosen) throw new InvalidTokenError("token issuer is not a trusted authorization server");
      return chosen.verify(token);
    },
  };
  return {
    verifier,
    resource,
    resourceIdentifier,
    requiredScopes: verifierFields.required_scopes,
    authorizationServers: servers.map((server) => server.issuer),
    ...(verifierFields.required_scopes.length > 0 ? { scopesSupported: verifierFields.required_scopes } : {}),
    warnings: [],
  };
}
