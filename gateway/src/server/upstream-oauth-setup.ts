// Builds the gateway's OAuth client for upstreams (upstream_auth_type oauth) once at start. Its key (SVC_OAUTH_KV_KEY)
// and callback URL (SVC_PUBLIC_URL) are fixed for the life of the process: tokens sealed under the key and clients
// registered with the callback outlive any config reload. Without them it is still built, and every oauth upstream
// fails closed with a message naming what is missing; a malformed key stops the start.
//
// Its requests go through the guarded fetch: the origins of the config in force (each server's url and
// auth_server_url) are trusted as written, anything a vendor's metadata names is held to https and public addresses.
// SVC_ALLOW_INSECURE_UPSTREAM_OAUTH=true lifts that for development (vendors on localhost), loudly.
//
// Connect links are confirmed by a sign-in at the user's identity provider with the gateway's web client there:
// identity_providers[].login_client_id/secret, else, for the first provider (where oauth_server logs users in, and
// whose users hold oauth_server's tokens), oauth_server's idp_client_id/secret.
import type { AuditLog } from "../audit/audit-log.ts";
import type { GatewayConfig, ServerConfig } from "../config/index.ts";
import type { KvStore } from "../kv/index.ts";
import type { Logger } from "../log/logger.ts";
import { createGuardedFetch, type GuardedFetch } from "../net/guarded-http.ts";
import { readKvKey } from "../oauth/oauth-secrets.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import type { LoginClient } from "../upstream-oauth/browser-login.ts";
import { OAUTH_REQUEST_TIMEOUT_MS, OAUTH_RESPONSE_MAX_BYTES } from "../upstream-oauth/http-options.ts";
import { UpstreamOAuth } from "../upstream-oauth/upstream-oauth.ts";

export interface UpstreamOAuthSetup {
  env: Record<string, string | undefined>;
  kv: KvStore;
  audit: AuditLog;
  logger: Logger;
  publicUrl: string | undefined;
  currentConfig: () => ConfigSnapshot | undefined;
}

export function buildUpstreamOAuth(setup: UpstreamOAuthSetup): UpstreamOAuth {
  const kvKey = readKvKey(setup.env);
  if (kvKey?.ephemeral === true) {
    setup.logger.warn(
      "!!! SVC_OAUTH_DEV_KEYS=true: upstream OAuth tokens are sealed with a key made up for this process; they die with it and other replicas cannot open them. For development only !!!",
    );
  }
  const servers = () => setup.currentConfig()?.loaded.config.servers ?? [];
  const fetch = upstreamFetch(setup.env, setup.logger, servers);
  return new UpstreamOAuth({
    kv: setup.kv,
    kvKey: kvKey?.key,
    publicUrl: setup.publicUrl,
    audit: setup.audit,
    logger: setup.logger,
    servers,
    fetch,
    development: fetch.insecure,
    loginClientFor: (provider) => {
      const config = setup.currentConfig()?.loaded.config;
      return config === undefined ? undefined : loginClientFor(config, provider);
    },
  });
}

/**
 * The provider name principals of the gateway's own authorization server carry (OAUTH_SERVER_PROVIDER of
 * oauth/oauth-server.ts, which is not imported here: it loads oidc-provider, which a gateway without oauth_server
 * does without; a test holds the two equal).
 */
export const OWN_SERVER_PROVIDER = "oauth_server";

/** The web client that signs users of `provider` (a principal's idp) in, or undefined when there is none. */
export function loginClientFor(
  config: Pick<GatewayConfig, "identity_providers" | "oauth_server">,
  provider: string,
): LoginClient | undefined {
  const first = config.identity_providers[0];
  const idp =
    provider === OWN_SERVER_PROVIDER ? first : config.identity_providers.find((p) => p.name === provider);
  if (idp === undefined) return undefined;
  if (idp.login_client_id !== undefined && idp.login_client_secret !== undefined) {
    return {
      provider: idp.name,
      issuer: idp.issuer,
      clientId: idp.login_client_id,
      clientSecret: idp.login_client_secret,
    };
  }
  const own = config.oauth_server;
  if (idp === first && own?.idp_client_id !== undefined && own.idp_client_secret !== undefined) {
    return {
      provider: idp.name,
      issuer: idp.issuer,
      clientId: own.idp_client_id,
      clientSecret: own.idp_client_secret,
    };
  }
  return undefined;
}

/** The guarded fetch of upstream OAuth: the configured servers' origins trusted, everything else checked. */
export function upstreamFetch(
  env: Record<string, string | undefined>,
  logger: Logger,
  servers: () => readonly ServerConfig[],
): GuardedFetch & { insecure: boolean } {
  const insecure = readInsecureSwitch(env);
  if (insecure) {
    logger.warn(
      "!!! SVC_ALLOW_INSECURE_UPSTREAM_OAUTH=true: vendor metadata may point the gateway at plain-http and private or loopback addresses. For development only !!!",
    );
  }
  let trusted: { from: readonly ServerConfig[]; origins: Set<string> } = { from: [], origins: new Set() };
  const fetch = createGuardedFetch({
    allowInsecure: insecure,
    timeoutMs: OAUTH_REQUEST_TIMEOUT_MS,
    maxResponseBytes: OAUTH_RESPONSE_MAX_BYTES,
    trustedOrigin: (origin) => {
      const current = servers();
      if (trusted.from !== current) trusted = { from: current, origins: configuredOrigins(current) };
      return trusted.origins.has(origin);
    },
  });
  return Object.assign(fetch, { insecure });
}

function configuredOrigins(servers: readonly ServerConfig[]): Set<string> {
  const origins = new Set<string>();
  for (const server of servers) {
    for (const url of [server.url, server.auth_server_url]) {
      if (url === undefined) continue;
      try {
        origins.add(new URL(url).origin);
      } catch {
        // The schema admits only URLs here; nothing to trust otherwise.
      }
    }
  }
  return origins;
}

function readInsecureSwitch(env: Record<string, string | undefined>): boolean {
  const text = env.SVC_ALLOW_INSECURE_UPSTREAM_OAUTH?.trim().toLowerCase();
  if (text === undefined || text === "" || text === "false") return false;
  if (text === "true") return true;
  throw new Error(`SVC_ALLOW_INSECURE_UPSTREAM_OAUTH must be true or false, got '${text}'`);
}
