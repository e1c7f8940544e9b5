// The company identity provider of the connect-link tests: a real oidc-provider with a login form (its development
// interactions: any user name logs in, then consents) and one confidential web client, the gateway's login client,
// whose redirect URI is the gateway's /oauth/upstream/login. It also signs the users' access tokens for the gateway
// (what an MCP client obtained from it before: the gateway checks them against its JWKS like any provider's).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT } from "jose";
import Provider from "oidc-provider";
import { generateSigningKey } from "svc-testkit/oidc-provider";

export const LOGIN_CLIENT = { id: "svc-gateway-login", secret: "svc-gateway-login-secret-0123456789" };
/** The audience of the users' gateway tokens (the gateway's api_identifiers). */
export const GATEWAY_AUDIENCE = "https://gateway.test/api";

export interface CompanyLoginIdp {
  issuer: string;
  jwksUri: string;
  /** A user's access token for the gateway. */
  userToken(sub: string): Promise<string>;
  /** A machine's access token for the gateway (client_credentials: its subject is its client). */
  machineToken(clientId: string): Promise<string>;
  /** How many authorization requests (sign-ins started) it has seen. */
  authorizations(): number;
  close(): Promise<void>;
}

/** `host`: ::1 puts the provider on another site than a gateway on 127.0.0.1, as a real one is (SameSite applies). */
export async function startCompanyLoginIdp(gatewayUrl: string, host = "127.0.0.1"): Promise<CompanyLoginIdp> {
  let handler: Parameters<typeof createServer>[1] = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  let authorizations = 0;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/auth?") === true) authorizations++;
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const issuer = `http://${host.includes(":") ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`;
  const key = generateSigningKey("RS256");
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: LOGIN_CLIENT.id,
        client_secret: LOGIN_CLIENT.secret,
        redirect_uris: [`${gatewayUrl}/oauth/upstream/login`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [{ ...key.privateKey.export({ format: "jwk" }), kid: key.kid, alg: "RS256", use: "sig" }] },
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
  });
  handler = provider.callback();
  const sign = (sub: string, claims: Record<string, unknown>) =>
    new SignJWT({ scope: "mcp", ...claims })
      .setProtectedHeader({ alg: "RS256", kid: key.kid })
      .setIssuer(issuer)
      .setSubject(sub)
      .setAudience(GATEWAY_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(key.privateKey);
  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    userToken: (sub) => sign(sub, {}),
    machineToken: (clientId) => sign(clientId, { client_id: clientId }),
    authorizations: () => authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
