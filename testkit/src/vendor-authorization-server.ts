// The third-party vendor's authorization server in the upstream-OAuth tests: a real oidc-provider with a login form
// (its development interactions: any user name logs in, then consents), authorization code with PKCE, refresh tokens,
// revocation, client_credentials, and RFC 8707 resource indicators issuing JWT access tokens for the vendor's MCP
// server. Refresh tokens rotate on every use. Dynamic Client Registration can be on or off; a preregistered client can be added. A test can shorten the
// access-token lifetime for the next tokens, and revoke everything a user granted (as a user does at the vendor).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { generateSigningKey } from "./oidc-provider.ts";

export interface VendorOptions {
  /** Dynamic Client Registration at /reg (advertised as registration_endpoint) or not at all. */
  registration: boolean;
  /** The scope the vendor's MCP server requires; granted for its resource. */
  scope: string;
  /** A client known in advance (for preregistered_client_id), with this redirect URI. */
  preregistered?: { id: string; secret: string; redirectUri: string };
}

export interface Vendor {
  issuer: string;
  jwksUri: string;
  /** Access tokens issued from now on live this many seconds (default 3600). */
  setAccessTokenTtl(seconds: number): void;
  /** Grants the next consents give: the scopes granted for the resource (default: the required scope). */
  setGrantedScope(scope: string): void;
  /** Ends every grant of `user` (their refresh tokens stop working), as revoking the app at the vendor does. */
  revokeUser(user: string): Promise<void>;
  /** How many refresh_token grants the vendor has answered with a token. */
  refreshes(): number;
  close(): Promise<void>;
}

export async function startVendor(options: VendorOptions): Promise<Vendor> {
  let handler: Parameters<typeof createServer>[1] = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = generateSigningKey("RS256");
  let accessTokenTtl = 3600;
  let grantedScope = options.scope;
  let refreshes = 0;
  const grantsByUser = new Map<string, Set<string>>();
  const provider = new Provider(issuer, {
    clients:
      options.preregistered === undefined
        ? []
        : [
            {
              client_id: options.preregistered.id,
              client_secret: options.preregistered.secret,
              redirect_uris: [options.preregistered.redirectUri],
              grant_types: ["authorization_code", "refresh_token"],
              response_types: ["code"],
            },
          ],
    jwks: { keys: [{ ...key.privateKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256", use: "sig" }] },
    scopes: ["openid", "offline_access", options.scope],
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    pkce: { required: () => true },
    // Every code grant of a client allowed refresh_token gets one (no offline_access dance): what vendors do for MCP.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // Every refresh rotates the refresh token; presenting a consumed one revokes the grant (oidc-provider's reuse
    // detection), as the vendors strictest about stolen refresh tokens do.
    rotateRefreshToken: () => true,
    ttl: { AccessToken: () => accessTokenTtl, ClientCredentials: () => accessTokenTtl },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: options.registration },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: grantedScope,
          audience: resource,
          accessTokenTTL: accessTokenTtl,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  provider.on("grant.success", (ctx) => {
    const token = ctx.oidc.entities.AccessToken;
    if (ctx.oidc.params?.grant_type === "refresh_token" && token !== undefined) refreshes++;
  });
  provider.on("grant.saved", (grant) => {
    const ids = grantsByUser.get(grant.accountId as string) ?? new Set<string>();
    ids.add(grant.jti);
    grantsByUser.set(grant.accountId as string, ids);
  });
  handler = provider.callback();
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    setGrantedScope(scope) {
      grantedScope = scope;
    },
    async revokeUser(user) {
      for (const id of grantsByUser.get(user) ?? []) {
        const grant = await provider.Grant.find(id);
        await grant?.destroy();
      }
      grantsByUser.delete(user);
    },
    refreshes: () => refreshes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
