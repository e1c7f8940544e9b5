// Builds the gateway's own authorization server from the loaded config and the environment, once at start: its
// issuer, keys and identity provider are fixed for the life of the process (tokens already issued name them), so a
// reload that changes oauth_server takes effect at the next restart, and the start log says which issuer serves.
import type { LoadedConfig } from "../config/index.ts";
import { oauthIssuerOf } from "../identity/resource-metadata.ts";
import type { KvStore } from "../kv/index.ts";
import type { Logger } from "../log/logger.ts";
import { createGuardedFetch } from "../net/guarded-http.ts";
import { readOAuthSecrets } from "../oauth/oauth-secrets.ts";
import type { OAuthServer } from "../oauth/oauth-server.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";

export interface OAuthServerSetup {
  env: Record<string, string | undefined>;
  kv: KvStore;
  logger: Logger;
  publicUrl: string | undefined;
  currentConfig: () => ConfigSnapshot | undefined;
}

/** A metadata document is a few hundred bytes, fetched while a user waits at the authorization endpoint. */
const CIMD_FETCH_TIMEOUT_MS = 5000;
const CIMD_MAX_BYTES = 64 * 1024;

function perMinute(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const text = env[name]?.trim();
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 100_000) {
    throw new Error(`${name} must be a whole number from 1 to 100000, got '${text}'`);
  }
  return value;
}

/**
 * The server when `oauth_server` is configured. oidc-provider and the login client are imported here, only then: a
 * gateway without an authorization server does not carry them in memory.
 */
export async function buildOAuthServer(
  loaded: LoadedConfig,
  setup: OAuthServerSetup,
): Promise<OAuthServer | undefined> {
  const config = loaded.config.oauth_server;
  if (config === undefined) return undefined;
  const base = config.issuer ?? setup.publicUrl;
  if (base === undefined) {
    // Tokens carry the issuer, so it cannot follow whatever Host a request names.
    throw new Error(
      "oauth_server needs a fixed issuer: set oauth_server.issuer or SVC_PUBLIC_URL to the URL clients reach this gateway at",
    );
  }
  const issuer = oauthIssuerOf(loaded.config, base);
  if (config.issuer !== undefined && new URL(config.issuer).pathname !== "/") {
    throw new Error(
      `oauth_server.issuer must be the gateway's origin without a path (the endpoints live at /oauth/ and /.well-known/), got ${config.issuer}`,
    );
  }
  const provider = loaded.config.identity_providers[0];
  if (provider?.issuer === undefined) {
    throw new Error(
      "oauth_server needs an identity provider with an issuer (the first of identity_providers)",
    );
  }
  const secrets = readOAuthSecrets(setup.env);
  if (secrets.ephemeral) {
    setup.logger.warn(
      "!!! SVC_OAUTH_DEV_KEYS=true: the OAuth server's signing and KV keys are generated for this process only; tokens and registrations die with it and other replicas cannot verify them. For development only !!!",
    );
  }
  const { OAuthServer } = await import("../oauth/oauth-server.ts");
  const server = new OAuthServer({
    config,
    issuer,
    secrets,
    kv: setup.kv,
    loginProvider: { issuer: provider.issuer },
    isResource: (url) => {
      if (url === issuer) return true;
      const match = /^\/([^/]+)\/mcp$/.exec(url.startsWith(`${issuer}/`) ? url.slice(issuer.length) : "");
      if (match === null) return false;
      const name = decodeURIComponent(match[1] as string);
      const routes = setup.currentConfig()?.routes ?? new Map();
      return (
        routes.get(name)?.enabled === true ||
        (routes.size === 0 && loaded.config.servers.some((s) => s.name === name))
      );
    },
    logger: setup.logger,
    fetch: createGuardedFetch({
      trustedOrigin: (origin) => config.client_id_metadata_documents.trusted_origins.includes(origin),
      timeoutMs: CIMD_FETCH_TIMEOUT_MS,
      maxResponseBytes: CIMD_MAX_BYTES,
    }),
    registrationsPerMinute: perMinute(setup.env, "SVC_OAUTH_REGISTRATIONS_PER_MINUTE", 60),
    registrationsPerAddressPerMinute: perMinute(
      setup.env,
      "SVC_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_MINUTE",
      10,
    ),
  });
  setup.logger.info("oauth authorization server on", {
    issuer,
    login_provider: provider.name,
    client_id_metadata_documents: config.client_id_metadata_documents.enabled ? "on" : "off",
    registration: !config.registration.enabled
      ? "off"
      : secrets.registrationToken === undefined
        ? "open"
        : "initial access token required",
  });
  return server;
}
