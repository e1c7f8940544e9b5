// Builds the gateway's OAuth client for upstreams (upstream_auth_type oauth) once at start. Its key (SVC_OAUTH_KV_KEY)
// and callback URL (SVC_PUBLIC_URL) are fixed for the life of the process: tokens sealed under the key and clients
// registered with the callback outlive any config reload. Without them it is still built, and every oauth upstream
// fails closed with a message naming what is missing; a malformed key stops the start.
import type { AuditLog } from "../audit/audit-log.ts";
import type { KvStore } from "../kv/index.ts";
import type { Logger } from "../log/logger.ts";
import { readKvKey } from "../oauth/oauth-secrets.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
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
  return new UpstreamOAuth({
    kv: setup.kv,
    kvKey: kvKey?.key,
    publicUrl: setup.publicUrl,
    audit: setup.audit,
    logger: setup.logger,
    servers: () => setup.currentConfig()?.loaded.config.servers ?? [],
  });
}
