// Which audience (`aud`) a provider's token must carry to be good at this gateway. Kept apart from the rest of token
// verification on purpose: it is the one rule that depends on the gateway's deployment (its public URL).
//
// A provider issues tokens for many APIs; a token for another of them must not be good here (token confusion). With
// `api_identifiers`, the token names one of them. Without, it must name this gateway's own resource (RFC 8707): its
// public URL, or one server's `{public URL}/{server}/mcp` — what the protected-resource metadata tells MCP clients
// to ask for. A gateway that knows neither cannot tell its tokens from another API's: its configuration is refused
// (config/audience-rule.ts).
import type { IdentityProviderConfig } from "../config/index.ts";
import { TokenRejected } from "./token-rejected.ts";

export type AudienceRule =
  /** `aud` names one of these (api_identifiers). */
  | { kind: "listed"; audiences: string[] }
  /** `aud` names the gateway (`origin`) or one of its /{server}/mcp resources. */
  | { kind: "gateway"; origin: string };

/** The rule for `provider`, or undefined when none can be made (no api_identifiers, public URL unknown). */
export function audienceRuleFor(
  provider: Pick<IdentityProviderConfig, "api_identifiers">,
  gatewayOrigin: string | undefined,
): AudienceRule | undefined {
  if (provider.api_identifiers.length > 0) return { kind: "listed", audiences: provider.api_identifiers };
  return gatewayOrigin === undefined ? undefined : { kind: "gateway", origin: gatewayOrigin };
}

/**
 * Checks `aud` against a "gateway" rule and returns the gateway resources it names (normalised: the origin, or
 * `{origin}/{server}/mcp`), which the MCP route then matches against the server asked for. Throws `wrong_audience`.
 */
export function gatewayResourcesIn(aud: unknown, origin: string): string[] {
  const audiences = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
  const resources: string[] = [];
  for (const value of audiences) {
    if (typeof value !== "string") continue;
    if (value === origin || value === `${origin}/`) resources.push(origin);
    else if (value.startsWith(`${origin}/`) && /^\/[^/?#]+\/mcp$/.test(value.slice(origin.length))) {
      resources.push(value);
    }
  }
  if (resources.length === 0) {
    throw new TokenRejected(
      "wrong_audience",
      `the token is not for this gateway: its audience must be ${origin} or ${origin}/{server}/mcp`,
    );
  }
  return resources;
}
