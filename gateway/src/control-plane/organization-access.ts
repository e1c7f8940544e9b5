// The access rules a server has on top of its own RBAC: the organization's server_rbac (every server) and the local
// servers policies of the organization and of the gateway (servers defined in the gateway's own YAML). Compiled once
// per snapshot; a request checks them right before the server's RBAC, and a user must pass every rule.
import type { GatewayConfig } from "../config/derive.ts";
import type { OrganizationPolicy } from "../config/organization-policy.ts";
import type { GatewayPolicy } from "../config/schema.ts";
import { GatewayError } from "../errors/gateway-error.ts";

export interface AccessRule {
  /** allow: only members of `groups` pass (everyone when null); deny: members of `groups` are refused (all when null). */
  mode: "allow" | "deny";
  groups: ReadonlySet<string> | null;
  /** Which policy the rule comes from, for the refusal's log record. */
  source: "organization server_rbac" | "organization local_servers" | "gateway local_servers";
}

/**
 * Rules for one server; undefined when none applies. `local`: the server is defined in the gateway's own YAML
 * (standalone and distributed mode), not by a control plane (centralized mode).
 */
export function accessRulesFor(
  config: GatewayConfig,
  organization: OrganizationPolicy | undefined,
  local: boolean,
): AccessRule[] | undefined {
  const rules: AccessRule[] = [];
  const orgRbac = organization?.server_rbac;
  if (orgRbac?.rbac_enabled) {
    const groups = orgRbac.rbac_mode === "allow" ? orgRbac.allowed_groups : orgRbac.denied_groups;
    rules.push({ mode: orgRbac.rbac_mode, groups: new Set(groups), source: "organization server_rbac" });
  }
  if (local) {
    const own = localServersRule(config.gateway_policy.local_servers, "gateway local_servers");
    if (own !== undefined) rules.push(own);
    const theirs = localServersRule(organization?.local_servers, "organization local_servers");
    if (theirs !== undefined) rules.push(theirs);
  }
  return rules.length === 0 ? undefined : rules;
}

function localServersRule(
  policy: GatewayPolicy["local_servers"] | undefined,
  source: AccessRule["source"],
): AccessRule | undefined {
  if (policy === undefined || !policy.enabled) return undefined;
  // allow with no group list admits everyone: no rule to check.
  if (policy.mode === "allow" && policy.groups === null) return undefined;
  return { mode: policy.mode, groups: policy.groups === null ? null : new Set(policy.groups), source };
}

/** Throws `forbidden` (403) when a rule refuses the user. */
export function checkAccessRules(
  rules: readonly AccessRule[],
  groups: readonly string[],
  server: string,
): void {
  for (const rule of rules) {
    const member = rule.groups === null || groups.some((group) => rule.groups?.has(group));
    const admitted = rule.mode === "allow" ? member : !member;
    if (!admitted) {
      throw new GatewayError(
        "forbidden",
        `Access to server '${server}' is not allowed for this user (${rule.source} policy)`,
        { server },
      );
    }
  }
}
