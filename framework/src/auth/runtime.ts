import type { Hono, MiddlewareHandler } from "hono";
import { requireHttpUrl } from "./env.ts";
import { AuthConfigError } from "./errors.ts";
import { createJwtMechanism } from "./jwt-auth.ts";
import type { TokenMechanism } from "./mechanism.ts";
import { createOAuthServerMechanism } from "./oauth-server/mechanism.ts";
import { registry } from "./registry.ts";
import { createRemoteMechanism } from "./remote-auth.ts";
import {
  createContextOnlyGuard,
  createTokenGuard,
  installProtectedResourceMetadata,
} from "./resource-server.ts";
import { createStaticMechanism } from "./static-auth.ts";

// Used by the framework runtime (not a public export): the auth layer it puts in front of /mcp, built from the
// project's auth.ts at start; a broken auth.ts stops the start instead of serving unauthenticated.

export interface AuthLayer {
  /** Mounts routes that must exist beside /mcp: RFC 9728 protected-resource metadata, OAuth server endpoints. */
  install(app: Hono): void;
  /** Guards /mcp: answers 401/403 itself, or calls next() inside the request context (AsyncLocalStorage) so
   *  getAuthToken()/getApiKey() work in handlers; sets c.set("authInfo", AuthInfo from the MCP SDK) when authenticated. */
  guard: MiddlewareHandler;
  /** Lines the runtime logs at start (e.g. the static dev tokens warning). */
  warnings: string[];
}

export interface AuthLayerOptions {
  /** The server's public base URL; the MCP endpoint is `${publicUrl}/mcp`. */
  publicUrl: string;
  env: Record<string, string | undefined>;
  /** A directory the server may write state to (the OAuth server's client registrations). */
  dataDir: string;
}

/** Logged once at start when /mcp is served without authentication (no auth.ts, or one that configures none). */
export const NO_AUTH_WARNING = "no auth configured: /mcp is open";

export { AuthConfigError } from "./errors.ts";
export { clearAuthConfiguration } from "./registry.ts";

/** Builds the layer from what the project's auth.ts registered. Throws AuthConfigError for broken config. */
export async function createAuthLayer(options: AuthLayerOptions): Promise<AuthLayer> {
  const { auth, apiKey, warnings } = registry();
  const publicUrl = requireHttpUrl("publicUrl", options.publicUrl);
  const defaultResource = new URL(
    "mcp",
    publicUrl.href.endsWith("/") ? publicUrl : new URL(`${publicUrl.href}/`),
  );

  if (!auth) {
    return {
      install: () => {},
      guard: createContextOnlyGuard(apiKey),
      warnings: [...warnings, NO_AUTH_WARNING],
    };
  }
  if (apiKey && apiKey.header_name.toLowerCase() === "authorization") {
    throw new AuthConfigError(
      "configureApiKey.header_name",
      "Authorization carries the bearer token checked by configureAuth; pass the API key in another header",
    );
  }

  let mechanism: TokenMechanism;
  switch (auth.kind) {
    case "jwt":
      mechanism = await createJwtMechanism(auth, options.env, defaultResource);
      break;
    case "static":
      mechanism = createStaticMechanism(auth);
      break;
    case "remote":
      mechanism = await createRemoteMechanism(auth, options.env, defaultResource);
      break;
    case "oauth_server":
      mechanism = await createOAuthServerMechanism(auth, {
        env: options.env,
        dataDir: options.dataDir,
        publicUrl,
      });
      break;
  }
  const resourceOptions = {
    mechanism,
    resource: mechanism.resource ?? defaultResource,
    resourceIdentifier: mechanism.resourceIdentifier ?? (mechanism.resource ?? defaultResource).href,
    publicUrl,
    ...(apiKey ? { apiKey } : {}),
  };
  return {
    install(app) {
      installProtectedResourceMetadata(app, resourceOptions);
      mechanism.install?.(app);
    },
    guard: createTokenGuard(resourceOptions),
    warnings: [...warnings, ...mechanism.warnings],
  };
}
