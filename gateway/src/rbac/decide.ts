import type { CapabilityOverride, GatewayPolicy, ServerConfig } from "../config/index.ts";
import type { Capability } from "./capability.ts";
import { governingOverrides } from "./patterns.ts";

/** A tool's annotations as its server lists them (MCP `ToolAnnotations`); only the hints RBAC uses. */
export interface ToolHints {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
}

export interface RbacDecision {
  allowed: boolean;
  /** Which rule decided, for the audit log: `server`, `override:tools/*`, `default:destructive`, `none`. */
  rule: string;
  reason: string;
}

const ALLOWED_BY_NO_RULE: RbacDecision = { allowed: true, rule: "none", reason: "no RBAC rule applies" };

/**
 * The one RBAC decision, used for calls and for list filtering alike. The server level decides first and a
 * capability level can only restrict further: an override never admits a user the server refuses.
 * - server (`rbac_enabled`): mode allow admits members of allowed_groups; mode deny refuses members of denied_groups.
 * - capability (`capability_rbac_enabled`, with a capability): the matching override (see governingOverrides);
 *   without one, for tools, the gateway's default groups by annotation (readOnlyHint → read_only, destructiveHint →
 *   destructive, else unspecified); an empty default list restricts nothing. Decided for every reading of the
 *   capability's name (mcp/canonical-form.ts); admitted only when every reading is.
 */
export function decide(
  server: ServerConfig,
  policy: GatewayPolicy,
  groups: readonly string[],
  capability?: Capability,
  hints?: ToolHints,
): RbacDecision {
  if (server.rbac_enabled) {
    const verdict = byMode(server.rbac_mode, server.allowed_groups, server.denied_groups, groups, policy);
    if (!verdict.allowed)
      return { allowed: false, rule: "server", reason: `server ${server.name}: ${verdict.reason}` };
  }
  if (!server.capability_rbac_enabled || capability === undefined) {
    return server.rbac_enabled
      ? { allowed: true, rule: "server", reason: `server ${server.name}: admitted` }
      : ALLOWED_BY_NO_RULE;
  }
  // Every reading must admit (mcp/canonical-form.ts). The canonical reading comes first: its rule names an admission;
  // a refusal by another reading says which one, so the log explains why the spelling was refused.
  const governing = governingOverrides(server.capability_overrides, capability);
  let admitted: RbacDecision | undefined;
  for (const [i, { override, reading }] of governing.entries()) {
    const decision = byCapabilityRule(override, capability, policy, groups, hints);
    if (!decision.allowed)
      return i === 0 ? decision : { ...decision, reason: `${decision.reason} (read ${reading})` };
    admitted ??= decision;
  }
  return admitted ?? ALLOWED_BY_NO_RULE;
}

/** The capability level for one reading: its override, else (tools) the default groups by annotation. */
function byCapabilityRule(
  override: CapabilityOverride | undefined,
  capability: Capability,
  policy: GatewayPolicy,
  groups: readonly string[],
  hints: ToolHints | undefined,
): RbacDecision {
  if (override !== undefined) {
    if (!override.rbac_enabled)
      return {
        allowed: true,
        rule: `override:${override.capability}`,
        reason: "RBAC off for this capability",
      };
    const verdict = byMode(
      override.rbac_mode,
      override.allowed_groups,
      override.denied_groups,
      groups,
      policy,
    );
    return {
      allowed: verdict.allowed,
      rule: `override:${override.capability}`,
      reason: `${override.capability}: ${verdict.reason}`,
    };
  }
  if (capability.kind !== "tools") return ALLOWED_BY_NO_RULE;
  const category =
    hints?.destructiveHint === true
      ? "destructive"
      : hints?.readOnlyHint === true
        ? "read_only"
        : "unspecified";
  const defaults = policy.capability_rbac[category].default_groups;
  if (defaults.length === 0) return ALLOWED_BY_NO_RULE;
  const verdict = byMode("allow", defaults, [], groups, policy);
  return {
    allowed: verdict.allowed,
    rule: `default:${category}`,
    reason: `${category} tools: ${verdict.reason}`,
  };
}

/**
 * Mode deny refuses members of the denied groups, so it can only judge a caller whose groups it knows: a caller with
 * no group at all (a token without a group claim, a machine client, nothing from group sync) is refused too unless
 * the operator says such callers may pass (gateway_policy.server_rbac.deny_requires_groups: false). Otherwise anyone
 * able to get a token without groups — a registered machine client, an identity provider not set up for group
 * claims — would pass every deny list.
 */
function byMode(
  mode: "allow" | "deny",
  allowed: readonly string[],
  denied: readonly string[],
  groups: readonly string[],
  policy: GatewayPolicy,
): { allowed: boolean; reason: string } {
  if (mode === "allow") {
    const match = groups.find((g) => allowed.includes(g));
    return match === undefined
      ? { allowed: false, reason: "not in an allowed group" }
      : { allowed: true, reason: `allowed through group ${match}` };
  }
  if (groups.length === 0 && policy.server_rbac.deny_requires_groups) {
    return {
      allowed: false,
      reason: "no groups: mode deny admits only callers whose groups are known (deny_requires_groups)",
    };
  }
  const match = groups.find((g) => denied.includes(g));
  return match === undefined
    ? { allowed: true, reason: "in no denied group" }
    : { allowed: false, reason: `denied through group ${match}` };
}
