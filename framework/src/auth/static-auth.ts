import { createHash, timingSafeEqual } from "node:crypto";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { StaticTokenConfig } from "./config.ts";
import type { TokenMechanism } from "./mechanism.ts";

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/**
 * Static development tokens. Tokens are compared as SHA-256 digests with timingSafeEqual, and every entry is
 * compared (no early exit), so neither the length nor the position of a match leaks through timing.
 */
export function createStaticMechanism(config: StaticTokenConfig): TokenMechanism {
  const entries = Object.entries(config.fields.tokens).map(([token, info]) => ({
    hash: digest(token),
    info,
  }));
  const warnings = [
    `StaticTokenConfig: ${entries.length} static development token(s) accepted. Fixed tokens are for development only; use JWTAuthConfig, RemoteAuthConfig or OAuthServerConfig in production.`,
  ];
  return {
    requiredScopes: config.fields.required_scopes,
    authorizationServers: [],
    warnings,
    verifier: {
      async verify(token) {
        const presented = digest(token);
        let match: (typeof entries)[number] | undefined;
        for (const entry of entries) {
          if (timingSafeEqual(entry.hash, presented) && !match) match = entry;
        }
        if (!match) throw new InvalidTokenError("token is not recognised");
        return { token, clientId: match.info.client_id, scopes: [...match.info.scopes] };
      },
    },
  };
}
