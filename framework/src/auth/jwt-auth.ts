import type { JWTAuthConfig } from "./config.ts";
import { commaList, type Env, requireSecureUrl, resolveSetting, settingSource } from "./env.ts";
import { AuthConfigError } from "./errors.ts";
import { createJwtVerifier, type KeySource } from "./jwt-verifier.ts";
import type { TokenMechanism } from "./mechanism.ts";

const owner = "JWTAuthConfig";

/** Where the keys come from, resolved from the config and environment. */
function keySource(config: JWTAuthConfig, env: Env): KeySource {
  const f = config.fields;
  if (f.public_key !== undefined || f.public_key_env_var !== undefined) {
    const pem = resolveSetting(env, {
      field: `${owner}.public_key`,
      value: f.public_key,
      envVar: f.public_key_env_var,
      required: true,
    }) as string;
    return { kind: "pem", pem, where: settingSource(env, `${owner}.public_key`, f.public_key_env_var) };
  }
  if (f.jwks_uri === undefined && f.jwks_uri_env_var === undefined) {
    throw new AuthConfigError(
      `${owner}.jwks_uri`,
      "a key source is required: jwks_uri, jwks_uri_env_var (e.g. JWKS_URI) or public_key_env_var (e.g. JWT_PUBLIC_KEY)",
    );
  }
  const where = settingSource(env, `${owner}.jwks_uri`, f.jwks_uri_env_var);
  const uri = resolveSetting(env, {
    field: `${owner}.jwks_uri`,
    value: f.jwks_uri,
    envVar: f.jwks_uri_env_var,
    required: true,
  }) as string;
  return { kind: "jwks", url: requireSecureUrl(where, uri, env), where };
}

/** The JWT mechanism: bearer JWTs checked against a JWKS or PEM key, issuer, audience(s), required scopes. */
export async function createJwtMechanism(
  config: JWTAuthConfig,
  env: Env,
  resource: URL,
): Promise<TokenMechanism> {
  const f = config.fields;
  const keys = keySource(config, env);
  const issuer = resolveSetting(env, {
    field: `${owner}.issuer`,
    value: f.issuer,
    envVar: f.issuer_env_var,
    required: true,
  }) as string;
  const audienceText = resolveSetting(env, {
    field: `${owner}.audience`,
    value: typeof f.audience === "string" ? f.audience : f.audience?.join(","),
    envVar: f.audience_env_var,
    required: true,
  }) as string;
  const audiences = commaList(audienceText);
  if (audiences.length === 0) {
    throw new AuthConfigError(
      settingSource(env, `${owner}.audience`, f.audience_env_var),
      "holds no audience",
    );
  }
  const verifier = await createJwtVerifier({
    keys,
    issuer,
    audiences,
    resource,
    ...(f.algorithms ? { algorithms: f.algorithms } : {}),
  });
  return {
    verifier,
    requiredScopes: f.required_scopes,
    authorizationServers: [issuer],
    ...(f.required_scopes.length > 0 ? { scopesSupported: f.required_scopes } : {}),
    warnings: [],
  };
}
