// A configuration rule that depends on the deployment: an identity provider without api_identifiers is trusted only
// when the gateway knows its own public URL, which its tokens must then name (identity/audience.ts). Checked by
// `svc-gateway validate` (with the environment it runs in) and by every configuration the gateway loads.
import type { PathSegment } from "./problems.ts";

/** The gateway's origin for audience checks: SVC_PUBLIC_URL, else oauth_server.issuer; undefined when neither. */
export function gatewayOriginOf(
  publicUrl: string | undefined,
  issuer: string | undefined,
): string | undefined {
  for (const candidate of [publicUrl, issuer]) {
    if (candidate === undefined || candidate.trim() === "") continue;
    try {
      const url = new URL(candidate.trim());
      if (url.protocol === "http:" || url.protocol === "https:") return url.origin;
    } catch {}
  }
  return undefined;
}

const MISSING_AUDIENCE =
  "is empty while the gateway's public URL is unknown, so a token this provider issued for any other API would be " +
  "accepted. Set api_identifiers to the audience the provider puts in tokens for this gateway (its API identifier), " +
  "or set SVC_PUBLIC_URL (or oauth_server.issuer) so tokens must name this gateway's resource URL (RFC 8707)";

export function audienceProblems(
  providers: readonly { api_identifiers: readonly string[] }[],
  gatewayOrigin: string | undefined,
): { path: PathSegment[]; message: string }[] {
  if (gatewayOrigin !== undefined) return [];
  return providers.flatMap((provider, index) =>
    provider.api_identifiers.length > 0
      ? []
      : [{ path: ["identity_providers", index, "api_identifiers"], message: MISSING_AUDIENCE }],
  );
}
