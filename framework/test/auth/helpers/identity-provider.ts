import type { KeyObject } from "node:crypto";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import { generateSigningKey, startProvider } from "svc-testkit/oidc-provider";

// The framework tests' identity provider: the shared real OpenID provider (svc-testkit) issuing JWT access tokens
// for resource indicators through the client_credentials grant, with the scopes the framework's tools check. The
// signing algorithm of each resource is chosen per test, HS256 included (a resource server must refuse it).

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

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const rsa = generateSigningKey("RS256", "rsa-1");
  // Which algorithm the next token is signed with, keyed by resource: the provider reads it at issue time.
  const algFor = new Map<string, "RS256" | "ES256" | "HS256">();
  const provider = await startProvider({
    clients: [IDP_CLIENT],
    keys: [rsa, generateSigningKey("ES256", "ec-1")],
    scopes: IDP_SCOPES.split(" "),
    signingFor: (resource) => {
      const alg = algFor.get(resource) ?? "RS256";
      return alg === "HS256" ? { alg, key: Buffer.from(HS256_SECRET) } : { alg };
    },
  });

  return {
    issuer: provider.issuer,
    rsaKey: {
      privateKey: rsa.privateKey,
      publicPem: rsa.publicKey.export({ type: "spki", format: "pem" }).toString(),
      kid: rsa.kid,
    },
    token({ resource, scope = "tools:read", alg = "RS256" }) {
      algFor.set(resource, alg);
      return clientCredentialsToken({
        tokenUrl: provider.tokenUrl,
        clientId: IDP_CLIENT.id,
        clientSecret: IDP_CLIENT.secret,
        resource,
        scope,
      });
    },
    close: provider.close,
  };
}
