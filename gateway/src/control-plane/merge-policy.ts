// How the organization layer (from a control plane) merges with the gateway's own configuration. The rule: the
// organization sets the ceiling, and the gateway may only restrict it, except scrubbing, which is the union of every
// layer (the SPEC's rule: any layer that masks something masks it).
// - scrubbing: the organization's layer comes first in the list the snapshot compiles (org, gateway, server).
// - server_rbac: an organization access rule checked before each server's own RBAC (organization-access.ts);
//   a user must pass both.
// - capability_rbac default groups: the intersection of both lists when both are set, the one set otherwise. Two
//   lists with no group in common are refused: an empty list would mean "restricts nothing".
// - local_servers: both layers' policies apply; a user must pass both (organization-access.ts).
// - rate_limit: the stricter of the gateway's and the organization's (fewer requests per second); the gateway cannot
//   turn off a limit the organization sets. server_rate_limits apply on top, per server.
import type { GatewayConfig } from "../config/derive.ts";
import type { OrganizationPolicy } from "../config/organization-policy.ts";
import type { ConfigProblem } from "../config/problems.ts";
import type { GatewayPolicy, SecurityConfig } from "../config/schema.ts";

type CapabilityRbac = GatewayPolicy["capability_rbac"];
const ANNOTATION_KINDS = ["read_only", "destructive", "unspecified"] as const;

/** The gateway's configuration with the organization layer applied; problems when the two cannot be combined. */
export function mergeOrganizationPolicy(
  config: GatewayConfig,
  policy: OrganizationPolicy,
): { config: GatewayConfig } | { problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const capability = mergeCapabilityRbac(config.gateway_policy.capability_rbac, policy, problems);
  if (problems.length > 0) return { problems };
  return {
    config: {
      ...config,
      gateway_policy: { ...config.gateway_policy, capability_rbac: capability },
      security: { ...config.security, rate_limiting: stricterRateLimit(config.security, policy) },
    },
  };
}

function mergeCapabilityRbac(
  gateway: CapabilityRbac,
  policy: OrganizationPolicy,
  problems: ConfigProblem[],
): CapabilityRbac {
  const organization = policy.capability_rbac;
  if (organization === undefined) return gateway;
  const merged = { ...gateway };
  for (const kind of ANNOTATION_KINDS) {
    const ours = gateway[kind].default_groups;
    const theirs = organization[kind].default_groups;
    if (theirs.length === 0) continue;
    if (ours.length === 0) {
      merged[kind] = { default_groups: theirs };
      continue;
    }
    const both = ours.filter((group) => theirs.includes(group));
    if (both.length === 0) {
      problems.push({
        path: `gateway_policy.capability_rbac.${kind}.default_groups`,
        message: `shares no group with the organization policy's (${theirs.join(", ")}): a gateway may only narrow the organization's default groups`,
      });
    }
    merged[kind] = { default_groups: both };
  }
  return merged;
}

function stricterRateLimit(
  security: SecurityConfig,
  policy: OrganizationPolicy,
): SecurityConfig["rate_limiting"] {
  const ours = security.rate_limiting;
  const theirs = policy.rate_limit;
  if (theirs === undefined) return ours;
  const organization = {
    enabled: true,
    requests_per_minute: theirs.requests_per_minute,
    window_seconds: theirs.window_seconds,
  };
  if (!ours.enabled) return organization;
  const rate = (limit: { requests_per_minute: number; window_seconds: number }) =>
    limit.requests_per_minute / limit.window_seconds;
  return rate(ours) <= rate(organization) ? ours : organization;
}
