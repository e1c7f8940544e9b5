import type { IdentityProviderConfig } from "../config/index.ts";

/**
 * The issuer values a provider's tokens may carry. A directory_idp tenant issues v2 tokens with
 * `https://login.microsoftonline.com/{tenant}/v2.0` and v1 tokens with `https://sts.windows.net/{tenant}/`;
 * both are accepted for the configured tenant, besides the configured issuer itself.
 */
export function acceptedIssuers(provider: IdentityProviderConfig): string[] {
  const issuers = new Set([provider.issuer]);
  if (provider.type === "directory_idp" && provider.tenant_id !== undefined) {
    issuers.add(`https://login.microsoftonline.com/${provider.tenant_id}/v2.0`);
    issuers.add(`https://sts.windows.net/${provider.tenant_id}/`);
  }
  return [...issuers];
}
