import { generateKeyPairSync, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

// The end-to-end tests' identity provider: a real OpenID provider (oidc-provider) that issues RS256 JWT access
// tokens through the client_credentials grant. Each client stands for a user with fixed groups, carried in the
// token's `groups` claim, so a test (or the kind e2e) gets "a token of someone in engineering" by naming a client.
// The same program runs in both end-to-end setups: spawned by `npm run e2e`, and as a Pod in the kind cluster
// (e2e/scripts/identity-provider.ts is its command line, e2e/kind/identity-provider.Dockerfile its image).

export interface IdentityProviderClient {
  id: string;
  secret: string;
  groups: string[];
}

export interface IdentityProviderOptions {
  host: string;
  port: number;
  /** The `iss` of its tokens; default `http://{host}:{port}` as it listens (in a cluster: the Service's URL). */
  issuer?: string;
  clients: IdentityProviderClient[];
  /** Token lifetime in seconds. */
  tokenTtl?: number;
}

export interface RunningIdentityProvider {
  issuer: string;
  /** Where it listens (differs from the issuer behind a Service or a port-forward). */
  url: string;
  close(): Promise<void>;
}

/** `id:secret:group1,group2` (groups may be empty), the command line's form of a client. */
export function parseClient(text: string): IdentityProviderClient {
  const [id, secret, groups, ...rest] = text.split(":");
  if (!id || !secret || groups === undefined || rest.length > 0) {
    throw new Error(`a client is id:secret:group1,group2 (groups may be empty), got '${text}'`);
  }
  return { id, secret, groups: groups.split(",").filter((group) => group !== "") };
}

export async function startIdentityProvider(
  options: IdentityProviderOptions,
): Promise<RunningIdentityProvider> {
  if (options.clients.length === 0) throw new Error("the identity provider needs at least one client");
  let handler = (_request: IncomingMessage, response: ServerResponse): void => {
    response.statusCode = 503;
    response.end();
  };
  const server: Server = createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${hostForUrl}:${port}`;
  const issuer = options.issuer ?? url;
  const tokenTtl = options.tokenTtl ?? 600;
  const groupsOf = new Map(options.clients.map((client) => [client.id, client.groups]));
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });

  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ["client_credentials"],
      redirect_uris: [],
      response_types: [],
    })),
    jwks: {
      keys: [{ ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" }],
    },
    ttl: { ClientCredentials: tokenTtl },
    extraTokenClaims: (_ctx, token) => ({ groups: groupsOf.get(token.clientId ?? "") ?? [] }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // The gateway checks `aud` against the provider's api_identifiers: the client names it as `resource`.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: "",
          audience: resource,
          accessTokenTTL: tokenTtl,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } },
        }),
      },
    },
  });
  handler = provider.callback();

  return {
    issuer,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
