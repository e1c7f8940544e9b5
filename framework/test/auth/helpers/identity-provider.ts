import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, type JWK } from "jose";
import Provider from "oidc-provider";

// A real OpenID provider (oidc-provider) on 127.0.0.1 issuing JWT access tokens for resource indicators,
// through the client_credentials grant. The signing algorithm of each resource is chosen per test.

export interface IdentityProvider {
  issuer: string;
  /** RSA signing key (RS256), to build tokens the provider cannot produce (expired, foreign issuer). */
  rsaKey: { privateKey: KeyObject; publicPem: string; kid: string };
  /** A client_credentials access token for `resource`. */
  token(options: { resource: string; scope?: string; alg?: "RS256" | "ES256" | "HS256" }): Promise<string>;
  close(): Promise<void>;
}

export const IDP_CLIENT = { id: "svc-test-client", secret: "svc-test-client-secret-0123456789abcdef" };
export const IDP_SCOPES = "tools:read tools:write admin tickets:read tickets:write";
/** The secret oidc-provider uses for HS256 tokens (which resource servers must refuse). */
export const HS256_SECRET = "a-shared-secret-that-must-never-be-accepted-00";

async function privateJwk(key: KeyObject, kid: string, alg: string): Promise<JWK> {
  return { ...(await exportJWK(key)), kid, alg, use: "sig" };
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Which algorithm the next token is signed with, keyed by resource.
  const algFor = new Map<string, string>();

  const provider = new Provider(issuer, {
    scopes: ["openid", ...IDP_SCOPES.split(" ")],
    clients: [
      {
        client_id: IDP_CLIENT.id,
        client_secret: IDP_CLIENT.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        scope: IDP_SCOPES,
      },
    ],
    jwks: {
      keys: [
        await privateJwk(rsa.privateKey, "rsa-1", "RS256"),
        await privateJwk(ec.privateKey, "ec-1", "ES256"),
      ],
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => {
          const alg = algFor.get(resource) ?? "RS256";
          return {
            scope: IDP_SCOPES,
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: "jwt",
            jwt: { sign: alg === "HS256" ? { alg, key: Buffer.from(HS256_SECRET) } : { alg } },
          };
        },
      },
    },
  });
  handler = provider.callback();

  return {
    issuer,
    rsaKey: {
      privateKey: rsa.privateKey,
      publicPem: rsa.publicKey.export({ type: "spki", format: "pem" }).toString(),
      kid: "rsa-1",
    },
    async token({ resource, scope = "tools:read", alg = "RS256" }) {
      algFor.set(resource, alg);
      const response = await fetch(`${issuer}/token`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${IDP_CLIENT.id}:${IDP_CLIENT.secret}`).toString("base64")}`,
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!response.ok || !body.access_token) {
        throw new Error(`identity provider refused a token: ${response.status} ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
