import { AsyncLocalStorage } from "node:async_hooks";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";

/** What the guard learned about the current request; read by tools through getAuthToken()/getApiKey(). */
export interface AuthRequestContext {
  /** The bearer token the caller presented (validated unless no mechanism is configured). */
  readonly token?: string;
  /** The API key taken from the configured header (API-key pass-through only). */
  readonly apiKey?: string;
  /** The validated token's details, as the MCP SDK passes them to handlers. */
  readonly authInfo?: AuthInfo;
}

// One store per process even if a bundler duplicates this module (the project's bundled auth.ts and the
// runtime must see the same context), hence a global registered under a well-known symbol.
const storeKey = Symbol.for("svc.auth.requestContext");
const holder = globalThis as { [storeKey]?: AsyncLocalStorage<AuthRequestContext> };
holder[storeKey] ??= new AsyncLocalStorage<AuthRequestContext>();
const store: AsyncLocalStorage<AuthRequestContext> = holder[storeKey];

/** Runs `fn` with `context` as the current request's auth context. */
export function runWithAuthContext<T>(context: AuthRequestContext, fn: () => T): T {
  return store.run(context, fn);
}

/** The API key from the configured header of the current request, or undefined when absent. */
export function getApiKey(): string | undefined {
  return store.getStore()?.apiKey;
}

/** The bearer token of the current request, or undefined when absent. Forward it upstream as `Bearer <token>`. */
export function getAuthToken(): string | undefined {
  return store.getStore()?.token;
}

/** The validated token's details for the current request, or undefined. */
export function getAuthInfo(): AuthInfo | undefined {
  return store.getStore()?.authInfo;
}
