import type { Hono } from "hono";
import type { TokenVerifier } from "./token-verifier.ts";

/** What each token mechanism hands to the resource-server guard. */
export interface TokenMechanism {
  verifier: TokenVerifier;
  /** The protected resource's identifier when the config names one; otherwise `${publicUrl}/mcp`. */
  resource?: URL;
  /** The resource identifier exactly as configured (a pathless URL keeps no trailing slash, RFC 8707). */
  resourceIdentifier?: string;
  requiredScopes: string[];
  /** Issuers advertised in the RFC 9728 metadata (empty for static tokens). */
  authorizationServers: string[];
  /** Advertised as scopes_supported when known. */
  scopesSupported?: string[];
  resourceDocumentation?: string;
  warnings: string[];
  /** Routes the mechanism serves itself (the built-in OAuth server's endpoints). */
  install?(app: Hono): void;
}
