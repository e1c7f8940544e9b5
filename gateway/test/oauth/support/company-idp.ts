// The company identity provider of the OAuth-server tests: a real oidc-provider with a login form (its development
// interactions: any user name logs in), which issues ID tokens carrying the user's groups to one confidential client,
// the gateway. Users and their groups are fixed per test.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { generateSigningKey } from "svc-testkit/oidc-provider";

export const GATEWAY_CLIENT = { id: "svc-gateway", secret: "svc-gateway-secret-0123456789abcdef" };

export interface CompanyIdp {
  issuer: string;
  close(): Promise<void>;
}

export async function startCompanyIdp(options: {
  gatewayUrl: string;
  groups: Record<string, string[]>;
  /**
   * The loopback address to serve on. A real browser keeps cookies per host, not per port: the Chromium tests put the
   * identity provider on ::1 and the gateway on 127.0.0.1, two sites as in a deployment, so neither sees the other's
   * cookies and the return to the gateway is a cross-site navigation (SameSite applies).
   */
  host?: "127.0.0.1" | "::1";
}): Promise<CompanyIdp> {
  let handler: Parameters<typeof createServer>[1] = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler?.(req, res));
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const issuer = host === "::1" ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`;
  const key = generateSigningKey("RS256");
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: GATEWAY_CLIENT.id,
        client_secret: GATEWAY_CLIENT.secret,
        redirect_uris: [`${options.gatewayUrl}/oauth/callback`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...key.privateKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256", use: "sig" }] },
    claims: { openid: ["sub", "groups"] },
    // The groups in the ID token itself, as company providers configured for group claims do.
    conformIdTokenClaims: false,
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, groups: options.groups[sub] ?? [] }),
    }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
  });
  handler = provider.callback();
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
