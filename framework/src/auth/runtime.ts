import type { Hono, MiddlewareHandler } from "hono";
import { type AuthRequestContext, runWithAuthContext } from "./context.ts";
import { AuthConfigError } from "./errors.ts";
import { registry } from "./registry.ts";

// Used by the framework runtime (not a public export): contract 5 in coord/CONTRACTS.md.

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
  /** The server's public base URL (no trailing slash needed); the MCP endpoint is `${publicUrl}/mcp`. */
  publicUrl: string;
  env: Record<string, string | undefined>;
  /** A directory the server may write state to (OAuth client registrations). */
  dataDir: string;
}

export { AuthConfigError } from "./errors.ts";
export { clearAuthConfiguration } from "./registry.ts";

/** Reads the bearer token of an Authorization header, or undefined. */
function bearerToken(header: string | undefined): string | undefined {
  const match = header ? /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header) : null;
  return match?.[1];
}

/** Builds the layer from what the project's auth.ts registered. Throws AuthConfigError for broken config. */
export async function createAuthLayer(options: AuthLayerOptions): Promise<AuthLayer> {
  const { auth, apiKey, warnings } = registry();
  if (auth) {
    throw new AuthConfigError("configureAuth", `${auth.constructor.name} is not available yet`);
  }
  const guard: MiddlewareHandler = async (c, next) => {
    let context: AuthRequestContext = {};
    const token = bearerToken(c.req.header("authorization"));
    if (token) context = { ...context, token };
    if (apiKey) {
      let value = c.req.header(apiKey.header_name);
      if (value !== undefined && apiKey.header_prefix && value.startsWith(apiKey.header_prefix)) {
        value = value.slice(apiKey.header_prefix.length).trim();
      }
      if (value) context = { ...context, apiKey: value };
    }
    await runWithAuthContext(context, () => next());
  };
  void options;
  return { install: () => {}, guard, warnings: [...warnings] };
}
