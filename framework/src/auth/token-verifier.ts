import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { JWTPayload } from "jose";

/**
 * Checks one bearer token. Resolves to the caller's AuthInfo, or rejects with the MCP SDK's InvalidTokenError
 * (→ 401). Required scopes are checked by the guard, not here, so every mechanism answers 403 the same way.
 */
export interface TokenVerifier {
  verify(token: string): Promise<AuthInfo>;
}

/** Scopes of a JWT: the RFC 9068 `scope` string, or the `scp` claim some providers use. */
export function scopesOf(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  if (typeof raw === "string") return raw.split(" ").filter((scope) => scope.length > 0);
  if (Array.isArray(raw)) return raw.filter((scope): scope is string => typeof scope === "string");
  return [];
}

/** AuthInfo for a verified JWT. */
export function authInfoFromJwt(token: string, payload: JWTPayload, resource?: URL): AuthInfo {
  const clientId = [payload.client_id, payload.azp, payload.sub].find(
    (value): value is string => typeof value === "string",
  );
  const info: AuthInfo = {
    token,
    clientId: clientId ?? "unknown",
    scopes: scopesOf(payload),
    extra: { sub: payload.sub, iss: payload.iss, claims: payload },
  };
  if (payload.exp !== undefined) info.expiresAt = payload.exp;
  if (resource) info.resource = resource;
  return info;
}
