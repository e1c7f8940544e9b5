import type { ApiKeyConfig, AuthConfig } from "./config.ts";
import { JWTAuthConfig, OAuthServerConfig, RemoteAuthConfig, StaticTokenConfig } from "./config.ts";
import { AuthConfigError } from "./errors.ts";

// What the project's auth.ts registered. Kept on a global under a well-known symbol so the runtime and a
// bundled copy of auth.ts share it (a bundler may duplicate this module).
interface Registry {
  auth?: AuthConfig;
  apiKey?: ApiKeyConfig;
  warnings: string[];
}
const registryKey = Symbol.for("svc.auth.registry");
const holder = globalThis as { [registryKey]?: Registry };

export function registry(): Registry {
  holder[registryKey] ??= { warnings: [] };
  return holder[registryKey];
}

/** Forgets everything registered (tests, and `svc dev` restarts in one process). */
export function clearAuthConfiguration(): void {
  holder[registryKey] = { warnings: [] };
}

/**
 * Registers the server's token authentication: one of JWTAuthConfig, StaticTokenConfig, OAuthServerConfig or
 * RemoteAuthConfig. Call it once, in auth.ts; a second call is an error (two mechanisms would be ambiguous).
 */
export function configureAuth(config: AuthConfig): void {
  if (
    !(
      config instanceof JWTAuthConfig ||
      config instanceof StaticTokenConfig ||
      config instanceof OAuthServerConfig ||
      config instanceof RemoteAuthConfig
    )
  ) {
    throw new TypeError(
      "configureAuth(config): config must be a JWTAuthConfig, StaticTokenConfig, OAuthServerConfig or RemoteAuthConfig (made with `new`)",
    );
  }
  const current = registry();
  if (current.auth) {
    throw new AuthConfigError("configureAuth", "called more than once; configure one mechanism");
  }
  current.auth = config;
}

/**
 * API-key pass-through: takes the key from `header_name` (stripping `header_prefix` when given) and exposes it
 * to tools through getApiKey(). Validates nothing: the upstream API authenticates.
 */
export function configureApiKey(header_name: string, header_prefix?: string): void {
  if (typeof header_name !== "string" || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header_name)) {
    throw new AuthConfigError("configureApiKey.header_name", "must be an HTTP header name such as X-API-Key");
  }
  if (header_prefix !== undefined && typeof header_prefix !== "string") {
    throw new AuthConfigError("configureApiKey.header_prefix", "must be a string when given");
  }
  const current = registry();
  if (current.apiKey) {
    throw new AuthConfigError("configureApiKey", "called more than once");
  }
  current.apiKey = header_prefix === undefined ? { header_name } : { header_name, header_prefix };
}
