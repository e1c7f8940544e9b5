import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { clientCredentialsToken } from "svc-testkit/client-credentials";
import { repoRoot } from "./paths.ts";
import { type ListeningProcess, spawnListening } from "./spawn-listening.ts";

// The e2e identity provider (oidc-provider) as its own process, the program the kind e2e runs as a Pod
// (e2e/scripts/identity-provider.ts). One client per kind of user; tokens carry the client's groups.

export const AUDIENCE = "https://svc-gateway.e2e";

export interface IdentityProviderProcess extends ListeningProcess {
  issuer: string;
  /** A fresh access token for `AUDIENCE` of the user behind `clientId`. */
  token(clientId: string): Promise<string>;
  /** `id:secret`, as e2e/scripts/kind-mcp-check.ts takes it. */
  credentials(clientId: string): string;
}

export async function startIdentityProviderProcess(
  users: Record<string, string[]>,
): Promise<IdentityProviderProcess> {
  const secrets = new Map(Object.keys(users).map((id) => [id, randomBytes(18).toString("base64url")]));
  // Clients through IDP_CLIENTS, as the kind e2e's Pod gets them from its Secret.
  const clients = Object.entries(users).map(([id, groups]) => `${id}:${secrets.get(id)}:${groups.join(",")}`);
  const process_ = await spawnListening(
    [join(repoRoot, "e2e", "scripts", "identity-provider.ts"), "--port", "0"],
    {
      IDP_CLIENTS: clients.join(" "),
    },
  );
  return {
    ...process_,
    issuer: process_.url,
    token: (clientId) =>
      clientCredentialsToken({
        tokenUrl: `${process_.url}/token`,
        clientId,
        clientSecret: secrets.get(clientId) ?? "",
        resource: AUDIENCE,
      }),
    credentials: (clientId) => `${clientId}:${secrets.get(clientId) ?? ""}`,
  };
}

/** A gateway configuration's `identity_providers` section trusting this provider, named `e2e` (YAML lines). */
export function identityProvidersYaml(issuer: string): string[] {
  return [
    "identity_providers:",
    "  - name: e2e",
    "    type: hosted_idp",
    `    issuer: ${issuer}`,
    `    jwks_uri: ${issuer}/jwks`,
    `    api_identifiers: ["${AUDIENCE}"]`,
  ];
}

/** The IdentityProvider custom resource trusting this provider, named `e2e`, in `namespace`. */
export function identityProviderResource(issuer: string, namespace: string, apiVersion: string) {
  return {
    apiVersion,
    kind: "IdentityProvider",
    metadata: { name: "e2e", namespace },
    spec: { type: "hosted_idp", issuer, jwksUri: `${issuer}/jwks`, apiIdentifiers: [AUDIENCE] },
  };
}
