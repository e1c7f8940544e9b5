import { generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, type JWTPayload, SignJWT } from "jose";
import Provider from "oidc-provider";
import type { DpopKey } from "./dpop-key.ts";

// A real OpenID provider (oidc-provider) on 127.0.0.1 issuing RS256 and ES256 JWT access tokens through the
// client_credentials grant, with the groups each test asks for. `sign` makes the tokens a real provider will not
// (expired, wrong audience, missing claims) with the provider's own current keys, so only one property differs.
// Asked with a DPoP key, the provider binds the token to it (RFC 9449: cnf.jkt), as its DPoP feature does.

export type SigningAlg = "RS256" | "ES256";

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

interface KeySet {
  rsa: { privateKey: KeyObject; publicKey: KeyObject; kid: string };
  ec: { privateKey: KeyObject; publicKey: KeyObject; kid: string };
}

function newKeys(): KeySet {
  const generation = randomUUID().slice(0, 8);
  return {
    rsa: { ...generateKeyPairSync("rsa", { modulusLength: 2048 }), kid: `rsa-${generation}` },
    ec: { ...generateKeyPairSync("ec", { namedCurve: "P-256" }), kid: `ec-${generation}` },
  };
}

export async function startTestIdentityProvider(): Promise<TestIdentityProvider> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const algFor = new Map<string, SigningAlg>();
  let nextClaims: Record<string, unknown> = {};
  let keys = newKeys();

  async function mount(): Promise<void> {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT.id,
          client_secret: CLIENT.secret,
          grant_types: ["client_credentials"],
          redirect_uris: [],
          response_types: [],
        },
      ],
      jwks: {
        keys: [
          { ...(await exportJWK(keys.rsa.privateKey)), kid: keys.rsa.kid, alg: "RS256", use: "sig" },
          { ...(await exportJWK(keys.ec.privateKey)), kid: keys.ec.kid, alg: "ES256", use: "sig" },
        ],
      },
      extraTokenClaims: () => nextClaims,
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => ({
            scope: "",
            audience: resource,
            accessTokenTTL: 300,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: algFor.get(resource) ?? "RS256" } },
          }),
        },
      },
    });
    handler = provider.callback();
  }
  await mount();

  return {
    issuer,
    jwksUri: `${issuer}/jwks`,
    async token({ resource, alg = "RS256", claims = {}, dpop }) {
      algFor.set(resource, alg);
      nextClaims = claims;
      const tokenUrl = `${issuer}/token`;
      const response = await fetch(tokenUrl, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}`,
          ...(dpop === undefined ? {} : { dpop: await dpop.proof({ htm: "POST", htu: tokenUrl }) }),
        },
        body: new URLSearchParams({ grant_type: "client_credentials", resource }),
      });
      const body = (await response.json()) as { access_token?: string; token_type?: string };
      if (!response.ok || body.access_token === undefined) {
        throw new Error(`the identity provider refused a token: ${response.status} ${JSON.stringify(body)}`);
      }
      if (dpop !== undefined && body.token_type !== "DPoP") {
        throw new Error(`the identity provider did not bind the token to the DPoP key: ${body.token_type}`);
      }
      return body.access_token;
    },
    sign(payload, { alg = "RS256", header = {} } = {}) {
      const key = alg === "RS256" ? keys.rsa : keys.ec;
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, sub: "crafted-subject", iat: now, exp: now + 300, ...payload })
        .setProtectedHeader({ alg, kid: key.kid, typ: "at+jwt", ...header })
        .sign(key.privateKey);
    },
    async rotateKeys() {
      keys = newKeys();
      await mount();
    },
    publicPem(alg) {
      return (alg === "RS256" ? keys.rsa : keys.ec).publicKey
        .export({ type: "spki", format: "pem" })
        .toString();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
