import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectClient } from "../../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../../proxy/support/upstream.ts";
import { startTestIdentityProvider, type TestIdentityProvider } from "./test-identity-provider.ts";

// How the gateway tests that need tokens point a gateway at the test identity provider and reach it as a user.

/** The audience (api_identifiers) the test gateways accept and the test tokens are issued for. */
export const AUDIENCE = "https://gateway.test/api";

/** The `identity_providers:` config section that trusts `idp` for `audience`. */
export function identityProvidersYaml(
  idp: Pick<TestIdentityProvider, "issuer" | "jwksUri">,
  { name = "test-idp", audience = AUDIENCE }: { name?: string; audience?: string } = {},
): string {
  return `identity_providers:\n${identityProviderEntryYaml(idp, { name, audience })}`;
}

/** One entry of the `identity_providers:` list, for configs that trust several providers. */
export function identityProviderEntryYaml(
  idp: Pick<TestIdentityProvider, "issuer" | "jwksUri">,
  { name, audience = AUDIENCE }: { name: string; audience?: string },
): string {
  return [
    `  - name: ${name}`,
    "    type: hosted_idp",
    `    issuer: ${JSON.stringify(idp.issuer)}`,
    `    jwks_uri: ${JSON.stringify(idp.jwksUri)}`,
    `    api_identifiers: [${JSON.stringify(audience)}]`,
    "",
  ].join("\n");
}

/** A real MCP SDK client on `url` with a real token from `idp` whose `groups` claim is `groups`. */
export async function connectWithGroups(
  idp: TestIdentityProvider,
  url: string,
  groups: string[],
): Promise<{ client: Client; token: string }> {
  const token = await idp.token({ resource: AUDIENCE, claims: { groups } });
  const { client } = await connectClient(url, { headers: { authorization: `Bearer ${token}` } });
  return { client, token };
}

/** The test identity provider and a stateful reference upstream, both stopped by `cleanup` after the suite. */
export async function startIdentityProviderAndUpstream(
  cleanup: (stop: () => Promise<unknown>) => void,
): Promise<{ idp: TestIdentityProvider; upstream: Upstream }> {
  const idp = await startTestIdentityProvider();
  cleanup(() => idp.close());
  const upstream = await startUpstream({ stateful: true });
  cleanup(() => upstream.close());
  return { idp, upstream };
}
