import { randomUUID } from "node:crypto";
import { type JWTPayload, SignJWT } from "jose";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import {
  generateSigningKey,
  type SigningAlg,
  type SigningKey,
  startProvider,
} from "svc-testkit/oidc-provider";
import type { DpopKey } from "./dpop-key.ts";

// The gateway tests' identity provider: the shared real OpenID provider (svc-testkit) issuing RS256 and ES256 JWT
// access tokens through the client_credentials grant, with the groups each test asks for. `sign` makes the tokens a
// real provider will not (expired, wrong audience, missing claims) with the provider's own current keys, so only one
// property differs. Asked with a DPoP key, the provider binds the token to it (RFC 9449: cnf.jkt), as its DPoP
// feature does.

export interface TestIdentityProvider {
  issuer: string;
  jwksUri: string;
  /**
   * A real access token for `resource`, carrying `claims` (e.g. groups) besides the provider's own; with `dpop`,
   * the token request carries a DPoP proof by that key and the provider issues a token bound to it.
   */
  token(options: {
    resource: string;
    alg?: SigningAlg;
    claims?: Record<string, unknown>;
    dpop?: DpopKey;
  }): Promise<string>;
  /** A token signed with the provider's current key for `alg`; defaults: iss, sub, aud, iat, exp in 5 minutes. */
  sign(
    payload: JWTPayload,
    options?: { alg?: SigningAlg; header?: Record<string, unknown> },
  ): Promise<string>;
  /** Replaces every signing key (new kids), as a provider does on rotation. */
  rotateKeys(): Promise<void>;
  publicPem(alg: SigningAlg): string;
  close(): Promise<void>;
}

const CLIENT = { id: "gateway-test-client", secret: "gateway-test-client-secret-0123456789" };

function newKeys(): Record<SigningAlg, SigningKey> {
  // One generation suffix for both kids, so a test can tell keys from before and after a rotation apart.
  const generation = randomUUID().slice(0, 8);
  return {
    RS256: generateSigningKey("RS256", `rsa-${generation}`),
    ES256: generateSigningKey("ES256", `ec-${generation}`),
  };
}

export async function startTestIdentityProvider(): Promise<TestIdentityProvider> {
  // What the next token carries is set just before its request: the provider reads both at issue time.
  const algFor = new Map<string, SigningAlg>();
  let nextClaims: Record<string, unknown> = {};
  let keys = newKeys();
  const setup = () => ({
    clients: [CLIENT],
    keys: [keys.RS256, keys.ES256],
    signingFor: (resource: string) => ({ alg: algFor.get(resource) ?? "RS256" }),
    claimsFor: () => nextClaims,
  });
  const provider = await startProvider(setup());

  return {
    issuer: provider.issuer,
    jwksUri: provider.jwksUri,
    async token({ resource, alg = "RS256", claims = {}, dpop }) {
      algFor.set(resource, alg);
      nextClaims = claims;
      return clientCredentialsToken({
        tokenUrl: provider.tokenUrl,
        clientId: CLIENT.id,
        clientSecret: CLIENT.secret,
        resource,
        ...(dpop === undefined
          ? {}
          : {
              headers: { dpop: await dpop.proof({ htm: "POST", htu: provider.tokenUrl }) },
              tokenType: "DPoP",
            }),
      });
    },
    sign(payload, { alg = "RS256", header = {} } = {}) {
      const key = keys[alg];
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: provider.issuer,
        sub: "crafted-subject",
        iat: now,
        exp: now + 300,
        ...payload,
      })
        .setProtectedHeader({ alg, kid: key.kid, typ: "at+jwt", ...header })
        .sign(key.privateKey);
    },
    async rotateKeys() {
      keys = newKeys();
      provider.reconfigure(setup());
    },
    publicPem(alg) {
      return keys[alg].publicKey.export({ type: "spki", format: "pem" }).toString();
    },
    close: provider.close,
  };
}
