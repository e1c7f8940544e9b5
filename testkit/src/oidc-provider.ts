// The one real OpenID provider (oidc-provider) behind every suite's identity provider: the client_credentials grant,
// resource indicators (RFC 8707: the token's `aud` is the `resource` the client asks for) and JWT access tokens,
// served over plain HTTP. The framework's and the gateway's test fixtures and the e2e identity provider program
// each add only what they are for (per-test algorithms and crafted tokens, fixed groups per client, a CLI).
//
// Why a workspace of its own (svc-testkit) rather than one product's test folder: the products must not import
// each other, and e2e references the products, so none of them can host a file the other two import. It imports
// only oidc-provider and node built-ins because the e2e identity provider image copies this file beside its program
// and installs nothing else (e2e/kind/identity-provider.Dockerfile).
import { generateKeyPairSync, type KeyObject, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type ResourceServer } from "oidc-provider";

export type SigningAlg = "RS256" | "ES256";

export interface SigningKey {
  alg: SigningAlg;
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** A fresh key pair for `alg` (RSA 2048 or P-256); a random kid unless one is given. */
export function generateSigningKey(alg: SigningAlg, kid: string = randomUUID()): SigningKey {
  const pair =
    alg === "RS256"
      ? generateKeyPairSync("rsa", { modulusLength: 2048 })
      : generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { alg, kid, ...pair };
}

export interface ProviderClient {
  id: string;
  secret: string;
}

export type TokenSigning = NonNullable<ResourceServer["jwt"]>["sign"];

export interface ProviderSetup {
  /** Clients allowed the client_credentials grant (client_secret_basic). */
  clients: ProviderClient[];
  /** The provider's signing keys, published at /jwks. */
  keys: SigningKey[];
  /** Scopes the provider knows, every client may ask for and every resource grants; default none. */
  scopes?: string[];
  /** Access token lifetime in seconds; default 300. */
  tokenTtl?: number;
  /** How the access token for `resource` is signed, read at each issue; default RS256. */
  signingFor?: (resource: string) => TokenSigning;
  /** Claims added to each access token of `clientId` (e.g. groups), read at each issue. */
  claimsFor?: (clientId: string | undefined) => Record<string, unknown>;
}

function configuration(setup: ProviderSetup): ConstructorParameters<typeof Provider>[1] {
  const scopes = setup.scopes ?? [];
  const scope = scopes.join(" ");
  const tokenTtl = setup.tokenTtl ?? 300;
  return {
    ...(scopes.length === 0 ? {} : { scopes: ["openid", ...scopes] }),
    clients: setup.clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
      ...(scopes.length === 0 ? {} : { scope }),
    })),
    jwks: {
      keys: setup.keys.map((key) => ({
        ...key.privateKey.export({ format: "jwk" }),
        kid: key.kid,
        alg: key.alg,
        use: "sig",
      })),
    },
    ttl: { ClientCredentials: tokenTtl },
    extraTokenClaims: (_ctx, token) => setup.claimsFor?.(token.clientId) ?? {},
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // No default audience: a client must name the resource server, as the gateway's api_identifiers and the
        // framework's JWT_AUDIENCE expect exactly that string in `aud`.
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope,
          audience: resource,
          accessTokenTTL: tokenTtl,
          accessTokenFormat: "jwt",
          jwt: { sign: setup.signingFor?.(resource) ?? { alg: "RS256" } },
        }),
      },
    },
  };
}

export interface ListenOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The tokens' `iss`; default the URL it listens on (differs behind a Service or a port-forward). */
  issuer?: string;
}

export interface RunningProvider {
  issuer: string;
  /** Where it listens. */
  url: string;
  tokenUrl: string;
  jwksUri: string;
  /** Serves a provider built from `setup` from now on, on the same issuer and port (e.g. after a key rotation). */
  reconfigure(setup: ProviderSetup): void;
  close(): Promise<void>;
}

export async function startProvider(
  setup: ProviderSetup,
  listen: ListenOptions = {},
): Promise<RunningProvider> {
  if (setup.clients.length === 0) throw new Error("the identity provider needs at least one client");
  // The issuer names the port, which is known only once listening: until the provider exists, refuse requests.
  let handler = (_request: IncomingMessage, response: ServerResponse): void => {
    response.statusCode = 503;
    response.end();
  };
  const server: Server = createServer((request, response) => handler(request, response));
  const host = listen.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(listen.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  const issuer = listen.issuer ?? url;
  const reconfigure = (next: ProviderSetup): void => {
    handler = new Provider(issuer, configuration(next)).callback();
  };
  reconfigure(setup);
  return {
    issuer,
    url,
    tokenUrl: `${url}/token`,
    jwksUri: `${url}/jwks`,
    reconfigure,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
