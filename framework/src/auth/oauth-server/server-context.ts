import type { OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ApprovalHook, OAuthServerConfigFields } from "../config.ts";
import type { ClientStore } from "./client-store.ts";
import type { GrantStore } from "./grant-store.ts";
import type { SigningKey } from "./signing-key.ts";

/** Endpoint paths of the built-in OAuth server, relative to base_url (documented in docs/auth.md). */
export const OAUTH_PATHS = {
  authorization: "/authorize",
  token: "/token",
  registration: "/register",
  revocation: "/revoke",
  jwks: "/.well-known/jwks.json",
} as const;

/** Everything the OAuth server's endpoints share. */
export interface OAuthServerContext {
  config: OAuthServerConfigFields;
  issuer: string;
  baseUrl: URL;
  /** The one resource tokens are issued for: `${base_url}/mcp`. */
  resource: URL;
  clients: ClientStore;
  grants: GrantStore;
  key: SigningKey;
  approve: ApprovalHook;
}

export function endpointUrl(context: OAuthServerContext, path: string): string {
  return new URL(path, context.baseUrl).href;
}

/** The one place an OAuth error becomes a JSON response (RFC 6749 §5.2). */
export function oauthErrorResponse(
  c: Context,
  error: OAuthError,
  status: ContentfulStatusCode = 400,
): Response {
  c.header("Cache-Control", "no-store");
  return c.json(error.toResponseObject(), status);
}

/** Reads an application/x-www-form-urlencoded body as single-valued fields (repeated fields are refused). */
export async function readForm(c: Context): Promise<Record<string, string> | undefined> {
  const type = c.req.header("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return undefined;
  const params = new URLSearchParams(await c.req.text());
  const form: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in form) return undefined;
    form[name] = value;
  }
  return form;
}
