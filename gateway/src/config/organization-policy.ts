import { z } from "zod";
import { intInRange, nameField, nonEmptyString } from "./fields.ts";
import {
  capabilityRbacDefaultsSchema,
  localServersPolicySchema,
  RATE_LIMIT_RANGES,
  scrubbingPolicySchema,
  serverRbacDefaultsSchema,
} from "./schema.ts";

// The organization layer of policy: what a control plane sends a gateway in distributed and centralized mode, and
// the spec of the operator's OrganizationPolicy resource (its CRD is generated from this schema). Each section
// reuses the gateway_policy section it merges with, so both layers are checked, and worded, one way. How the layers
// merge is in control-plane/merge-policy.ts: scrubbing by union; everything else the gateway may only restrict.

const rateLimitValue = (field: keyof typeof RATE_LIMIT_RANGES, what: string) =>
  intInRange(RATE_LIMIT_RANGES[field].min, RATE_LIMIT_RANGES[field].max).describe(
    `${what} (${RATE_LIMIT_RANGES[field].min}-${RATE_LIMIT_RANGES[field].max})`,
  );

export const organizationRateLimitSchema = z.strictObject({
  requests_per_minute: rateLimitValue("requests_per_minute", "Requests per user per window: a ceiling"),
  window_seconds: rateLimitValue("window_seconds", "Window length in seconds").default(60),
});

export const serverRateLimitSchema = z.strictObject({
  server: nameField("Server name this limit applies to (a servers[] name)"),
  requests_per_minute: rateLimitValue("requests_per_minute", "Requests per user per window on this server"),
  window_seconds: rateLimitValue("window_seconds", "Window length in seconds").default(60),
});

export const organizationPolicySchema = z
  .strictObject({
    scrubbing: scrubbingPolicySchema
      .optional()
      .describe("Organization scrubbing layer, merged by union with the gateway's and each server's"),
    server_rbac: serverRbacDefaultsSchema
      .optional()
      .describe(
        "Organization access rule checked before every server's own RBAC: allow admits only allowed_groups, deny refuses denied_groups (rbac_enabled turns it on)",
      ),
    capability_rbac: capabilityRbacDefaultsSchema
      .optional()
      .describe("Default groups by tool annotation; a gateway's own list may only narrow it"),
    local_servers: localServersPolicySchema
      .optional()
      .describe("Blocks or admits the servers a gateway defines in its own YAML, by group"),
    rate_limit: organizationRateLimitSchema
      .optional()
      .describe("Per-user rate limit every gateway enforces at most; a gateway may set a lower one"),
    server_rate_limits: z
      .array(serverRateLimitSchema)
      .max(1000)
      .optional()
      .describe("Per-user rate limits of single servers, on top of the global one"),
  })
  .describe("Organization policy");

/** The policy document a control plane serves (GET /v1/gateways/{id}/policy). */
export const policyDocumentSchema = z.strictObject({
  organization_id: nonEmptyString("The organization the policy belongs to"),
  generation: z.int().min(0).describe("Generation of the policy resource this document was built from"),
  policy: organizationPolicySchema,
});

export type OrganizationPolicy = z.output<typeof organizationPolicySchema>;
export type PolicyDocument = z.output<typeof policyDocumentSchema>;
