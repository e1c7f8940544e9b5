import type { JWTPayload } from "jose";

/** Who is calling, as every later step (limits, RBAC, audit) needs it. */
export interface Principal {
  sub: string;
  /** Name of the identity provider (from the configuration) that issued the token. */
  idp: string;
  groups: string[];
  scopes: string[];
  /** Token expiry, seconds since the epoch. */
  expiresAt: number;
  /**
   * The token's cnf.jkt (RFC 9449 section 6.1): the RFC 7638 thumbprint of the key it is bound to. Set = the token
   * is DPoP-bound and every request with it must carry a proof signed by that key; unset = a plain bearer token.
   * Kept on the principal because the verifier caches principals by token, so the hot path reads it for free.
   */
  dpopJkt?: string;
  /**
   * The gateway resources (RFC 8707) the token names: the gateway's URL or one /{server}/mcp URL. Set for tokens of
   * the gateway's own authorization server, and of a provider without api_identifiers (audience.ts); the MCP route
   * refuses the token at any other server. Unset for a provider's token checked against its api_identifiers.
   */
  resources?: string[];
  /**
   * The grant a user token of the gateway's own authorization server was issued under: once the grant is revoked
   * (the refresh token revoked, or reused after rotation), its access tokens are refused at once, before they expire.
   */
  grantId?: string;
  /** The token's `oid` (Microsoft Entra object id), which group sync looks the user up by in Graph. */
  oid?: string;
  /** True for a machine's token (isMachineToken): upstream OAuth then uses a server-wide client_credentials token. */
  machine?: boolean;
}

/**
 * A token a client obtained for itself (the client_credentials grant) rather than for a user: its subject is the
 * client (RFC 9068 section 2.2: `sub` is the client id when no resource owner is involved), or the provider marks the
 * grant type (`gty`, as Auth0 does for machine-to-machine tokens).
 */
export function isMachineToken(claims: JWTPayload): boolean {
  if (claims.gty === "client-credentials") return true;
  return typeof claims.sub === "string" && (claims.client_id === claims.sub || claims.azp === claims.sub);
}

/**
 * Groups come from the `groups` and `roles` claims, and from namespaced claims whose name ends in `/groups` or
 * `/roles` (e.g. `https://acme.example.com/roles`, as rule-based providers add them). A claim may be a string or a
 * list of strings; anything else is ignored. Group sync adds the provider's groups (group-sync/group-sync.ts).
 */
export function groupsFromClaims(claims: JWTPayload): string[] {
  const groups = new Set<string>();
  for (const [name, value] of Object.entries(claims)) {
    const isGroupClaim =
      name === "groups" || name === "roles" || name.endsWith("/groups") || name.endsWith("/roles");
    if (!isGroupClaim) continue;
    for (const group of Array.isArray(value) ? value : [value]) {
      if (typeof group === "string" && group !== "") groups.add(group);
    }
  }
  return [...groups];
}

/** OAuth scopes from `scope` (space-separated, RFC 8693 / 9068) or `scp` (a list or a string, as some IdPs send). */
export function scopesFromClaims(claims: JWTPayload): string[] {
  const raw = claims.scope ?? claims.scp;
  const list = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(" ") : [];
  return [...new Set(list.filter((s): s is string => typeof s === "string" && s !== ""))];
}
