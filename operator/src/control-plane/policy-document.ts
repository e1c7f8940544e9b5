import { createHash } from "node:crypto";
import { policyDocumentSchema } from "@svc-mcp/gateway/config";
import { FieldError, toGatewayValue } from "../api/gateway-fields.ts";
import { kindSchemas } from "../api/resource-schemas.ts";
import type { Resource } from "../render/resources.ts";

// An OrganizationPolicy as the document the control-plane API serves: its spec in the gateway's snake_case, checked
// with the gateway's own schema, and its ETag.

export interface ServedDocument {
  etag: string;
  body: Record<string, unknown>;
}

export type Lookup<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A strong ETag of a JSON document: the first 128 bits of its SHA-256. */
export function etagOf(body: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(body)).digest("hex").slice(0, 32)}"`;
}

export function organizationIdOf(policy: Resource): string {
  return (policy.spec as { organizationId?: string } | undefined)?.organizationId ?? policy.metadata.name;
}

/** The resource's spec as the gateway's policy document, checked with the gateway's own schema. */
export function buildPolicyDocument(policy: Resource): Lookup<ServedDocument> {
  const { organizationId: _id, ...spec } = (policy.spec ?? {}) as Record<string, unknown>;
  let converted: unknown;
  try {
    converted = toGatewayValue(spec, kindSchemas().OrganizationPolicy.gateway.schema, "spec", () => {
      throw new FieldError("spec", "an organization policy takes no secrets");
    });
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
  const document = {
    organization_id: organizationIdOf(policy),
    generation: policy.metadata.generation ?? 0,
    policy: converted,
  };
  const parsed = policyDocumentSchema.safeParse(document);
  if (!parsed.success) {
    return {
      ok: false,
      problem: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "),
    };
  }
  // What is served is what the resource says (defaults are the gateway's to apply), once it is known to validate.
  return { ok: true, value: { etag: etagOf(document), body: document } };
}
