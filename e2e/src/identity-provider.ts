// A relative import, not the svc-testkit package: the kind image copies this file, its command line and the
// testkit file beside each other and installs only oidc-provider, so there is no workspace link to resolve there.
import { generateSigningKey, startProvider } from "../../testkit/src/oidc-provider.ts";

// The end-to-end tests' identity provider: the shared real OpenID provider (svc-testkit) issuing RS256 JWT access
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
  /** Token lifetime in seconds; default 600. */
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
  const groupsOf = new Map(options.clients.map((client) => [client.id, client.groups]));
  const { issuer, url, close } = await startProvider(
    {
      clients: options.clients,
      keys: [generateSigningKey("RS256")],
      tokenTtl: options.tokenTtl ?? 600,
      claimsFor: (clientId) => ({ groups: groupsOf.get(clientId ?? "") ?? [] }),
    },
    options,
  );
  return { issuer, url, close };
}
