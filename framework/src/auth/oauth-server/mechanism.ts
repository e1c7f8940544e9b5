import { access, constants, mkdir } from "node:fs/promises";
import { cors } from "hono/cors";
import type { ApprovalHook, OAuthServerConfig } from "../config.ts";
import {
  type Env,
  isDevelopment,
  LOOPBACK_HOSTS,
  requireHttpUrl,
  resolveSetting,
  settingSource,
} from "../env.ts";
import { AuthConfigError } from "../errors.ts";
import type { TokenMechanism } from "../mechanism.ts";
import { createOwnTokenVerifier } from "./access-token.ts";
import { installAuthorization } from "./authorize.ts";
import { ClientStore } from "./client-store.ts";
import { GrantStore } from "./grant-store.ts";
import { installMetadata } from "./metadata.ts";
import { installRegistration } from "./register.ts";
import { installRevocation } from "./revoke.ts";
import { OAUTH_PATHS, type OAuthServerContext } from "./server-context.ts";
import { loadSigningKey } from "./signing-key.ts";
import { installToken } from "./token.ts";

const owner = "OAuthServerConfig";
/** Subject of tokens approved by the development default approval step. */
export const DEV_SUBJECT = "dev-user";

async function checkWritable(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await access(dataDir, constants.W_OK);
  } catch (error) {
    throw new AuthConfigError("dataDir", `${dataDir} is not writable: ${(error as Error).message}`);
  }
}

/** The built-in OAuth 2.0 authorization server, and the guard's verifier for the tokens it issues. */
export async function createOAuthServerMechanism(
  config: OAuthServerConfig,
  options: { env: Env; dataDir: string; publicUrl: URL },
): Promise<TokenMechanism> {
  const f = config.fields;
  const { env } = options;
  const development = isDevelopment(env);
  const warnings: string[] = [];

  const baseText = resolveSetting(env, {
    field: `${owner}.base_url`,
    value: f.base_url,
    envVar: f.base_url_env_var,
    required: false,
  });
  const baseUrl = baseText
    ? requireHttpUrl(settingSource(env, `${owner}.base_url`, f.base_url_env_var), baseText)
    : options.publicUrl;
  const issuerUrl = new URL(f.issuer_url ?? baseUrl.href);
  const issuer = issuerUrl.href.replace(/\/$/, "");
  // RFC 8414 metadata must be served by the issuer; this server can only serve its own origin.
  if (issuerUrl.origin !== baseUrl.origin) {
    throw new AuthConfigError(
      `${owner}.issuer_url`,
      `must be on the same origin as base_url (${baseUrl.origin})`,
    );
  }
  if (!development && issuerUrl.protocol !== "https:" && !LOOPBACK_HOSTS.has(issuerUrl.hostname)) {
    throw new AuthConfigError(`${owner}.issuer_url`, "must use https outside development (OAuth 2.1)");
  }

  let approve: ApprovalHook;
  if (f.approve) {
    approve = f.approve;
  } else if (development) {
    approve = () => ({ approved: true, subject: DEV_SUBJECT });
    warnings.push(
      `${owner}: no approve hook; every /authorize request is approved as "${DEV_SUBJECT}" (development only).`,
    );
  } else {
    throw new AuthConfigError(
      `${owner}.approve`,
      "a user-approval hook is required outside development (NODE_ENV=development uses an auto-approving default)",
    );
  }

  const key = await loadSigningKey(f.signing_key_env_var, env[f.signing_key_env_var], development);
  if (key.ephemeral) {
    warnings.push(
      `${owner}: ${f.signing_key_env_var} is not set; signing tokens with a temporary key that dies with this process (development only).`,
    );
  }
  await checkWritable(options.dataDir);
  const [clients, grants] = await Promise.all([
    ClientStore.open(options.dataDir),
    GrantStore.open(options.dataDir),
  ]);

  const context: OAuthServerContext = {
    config: f,
    issuer,
    baseUrl,
    resource: new URL("mcp", baseUrl.href.endsWith("/") ? baseUrl : new URL(`${baseUrl.href}/`)),
    clients,
    grants,
    key,
    approve,
  };
  return {
    verifier: createOwnTokenVerifier(context),
    resource: context.resource,
    requiredScopes: f.required_scopes,
    authorizationServers: [issuer],
    ...(f.valid_scopes.length > 0 ? { scopesSupported: f.valid_scopes } : {}),
    ...(f.service_documentation_url ? { resourceDocumentation: f.service_documentation_url } : {}),
    warnings,
    install(app) {
      // Browser-based MCP clients call these cross-origin (never /authorize, which is a navigation).
      const crossOrigin = cors({
        origin: "*",
        allowHeaders: ["authorization", "content-type", "mcp-protocol-version"],
      });
      const issuerPath = new URL(issuer).pathname.replace(/\/$/, "");
      for (const path of [
        `/.well-known/oauth-authorization-server${issuerPath}`,
        OAUTH_PATHS.jwks,
        OAUTH_PATHS.registration,
        OAUTH_PATHS.token,
        OAUTH_PATHS.revocation,
      ]) {
        app.use(path, crossOrigin);
      }
      installMetadata(app, context);
      installRegistration(app, context);
      installAuthorization(app, context);
      installToken(app, context);
      installRevocation(app, context);
    },
  };
}
