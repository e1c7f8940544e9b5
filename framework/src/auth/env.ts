import { AuthConfigError } from "./errors.ts";

export type Env = Record<string, string | undefined>;

/**
 * Resolves one setting that may come from an environment variable or be written in the config.
 * The rule for every `*_env_var` field: a set variable wins over the literal field; a named but unset (or
 * empty) variable falls back to the literal; with neither, a required setting is an AuthConfigError naming
 * the variable, so the server never starts half-configured.
 */
export function resolveSetting(
  env: Env,
  setting: { field: string; value?: string | undefined; envVar?: string | undefined; required: boolean },
): string | undefined {
  const fromEnv = setting.envVar ? env[setting.envVar]?.trim() : undefined;
  if (fromEnv) return fromEnv;
  if (setting.value !== undefined) return setting.value;
  if (!setting.required) return undefined;
  if (setting.envVar) {
    throw new AuthConfigError(
      setting.envVar,
      `environment variable is not set (named by ${setting.field}_env_var)`,
    );
  }
  throw new AuthConfigError(setting.field, `is required (set ${setting.field} or ${setting.field}_env_var)`);
}

/** Where a resolved setting came from, for error messages: the variable when it is set, else the field. */
export function settingSource(env: Env, field: string, envVar: string | undefined): string {
  return envVar && env[envVar]?.trim() ? envVar : field;
}

/** Splits a comma-separated list, dropping blanks. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/** Checks a URL read from the environment or config, naming where it came from when it is not http(s). */
export function requireHttpUrl(where: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AuthConfigError(where, `"${value}" is not a valid URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new AuthConfigError(where, `"${value}" must be an http(s) URL`);
  }
  return url;
}

/** Development is opted into explicitly (NODE_ENV=development or test); unset counts as production. */
export function isDevelopment(env: Env): boolean {
  return env.NODE_ENV === "development" || env.NODE_ENV === "test";
}

export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A URL that key material or metadata is fetched from: https, because over plain http anyone on the path
 * could substitute their own keys. http is accepted only for loopback hosts, or in development.
 */
export function requireSecureUrl(where: string, value: string, env: Env): URL {
  const url = requireHttpUrl(where, value);
  if (url.protocol === "http:" && !LOOPBACK_HOSTS.has(url.hostname) && !isDevelopment(env)) {
    throw new AuthConfigError(
      where,
      `"${value}" must use https (http is accepted only for loopback hosts or with NODE_ENV=development)`,
    );
  }
  return url;
}
