import {
  controlPlaneSchema,
  exportersSchema,
  gatewayPolicySchema,
  identityProviderSchema,
  oauthServerSchema,
  organizationPolicySchema,
  securitySchema,
  serverSchema,
} from "@svc-mcp/gateway/config";
import type { z } from "zod";
import { secretKeyRefSchema, toResourceSchema } from "./gateway-fields.ts";
import { type JsonSchema, zodToStructural } from "./json-schema.ts";
import type { Kind } from "./names.ts";
import { gatewayWorkloadSchema, serverDeploymentSchema, statusSchema } from "./operator-schemas.ts";

// The spec and status schemas of the three kinds, built from the gateway's zod schemas (camelCased, secrets
// as secretKeyRef: gateway-fields.ts) plus the operator's own parts (operator-schemas.ts). The CRDs, the
// `render` input check and the render's mapping back to gateway YAML all use these, so a field added to the
// gateway config appears in the CRDs on the next `npm run generate -w operator`.

/** The gateway-config part of a kind's spec, camelCase: what `toGatewayValue` maps back to snake_case. */
export interface GatewayPart {
  schema: JsonSchema;
  /** Spec keys that belong to the operator, not to the gateway entry. */
  operatorKeys: string[];
}

function fromGateway(schema: z.ZodType, where: string): JsonSchema {
  return toResourceSchema(zodToStructural(schema, where));
}

function withoutRequired(schema: JsonSchema, fields: string[]): JsonSchema {
  const required = (schema.required ?? []).filter((field) => !fields.includes(field));
  const { required: _drop, ...rest } = schema;
  return required.length > 0 ? { ...rest, required } : rest;
}

function buildServerSpec(): { spec: JsonSchema; gateway: GatewayPart } {
  // name defaults to metadata.name; url is derived when the operator runs the server (deployment).
  const gateway = withoutRequired(fromGateway(serverSchema, "McpServer.spec"), ["name", "url"]);
  const spec: JsonSchema = {
    ...gateway,
    description: "One upstream MCP server of the gateway (a servers[] entry)",
    properties: {
      ...gateway.properties,
      deployment: zodToStructural(serverDeploymentSchema, "McpServer.spec.deployment"),
      // The gateway reads an api_key server's key from its environment, not from its configuration: the
      // operator puts this Secret key there (an env entry on the gateway container), never into the ConfigMap.
      upstreamApiKey: {
        ...secretKeyRefSchema,
        description: `With upstreamAuthType api_key: the key sent to the upstream. ${secretKeyRefSchema.description}`,
      },
      upstreamApiKeyHeader: {
        type: "string",
        minLength: 1,
        pattern: "^[A-Za-z0-9-]+$",
        description:
          "With upstreamApiKey: the header that carries the key (default Authorization, as Bearer <key>)",
      },
    },
    "x-kubernetes-validations": [
      { rule: "has(self.url) != has(self.deployment)", message: "set exactly one of url or deployment" },
      {
        rule: "!has(self.upstreamApiKey) || (has(self.upstreamAuthType) && self.upstreamAuthType == 'api_key')",
        message: "upstreamApiKey needs upstreamAuthType: api_key",
      },
      {
        rule: "!has(self.upstreamApiKeyHeader) || has(self.upstreamApiKey)",
        message: "upstreamApiKeyHeader needs upstreamApiKey",
      },
    ],
  };
  return {
    spec,
    gateway: { schema: gateway, operatorKeys: ["deployment", "upstreamApiKey", "upstreamApiKeyHeader"] },
  };
}

function buildIdentityProviderSpec(): { spec: JsonSchema; gateway: GatewayPart } {
  const gateway = withoutRequired(fromGateway(identityProviderSchema, "IdentityProvider.spec"), ["name"]);
  return {
    spec: {
      ...gateway,
      description: "An identity provider whose tokens the gateway accepts (an identity_providers[] entry)",
    },
    gateway: { schema: gateway, operatorKeys: [] },
  };
}

function buildGatewaySpec(): { spec: JsonSchema; gateway: GatewayPart } {
  const gatewayProperties: Record<string, JsonSchema> = {
    gatewayPolicy: fromGateway(gatewayPolicySchema, "McpGateway.spec.gatewayPolicy"),
    security: fromGateway(securitySchema, "McpGateway.spec.security"),
    oauthServer: fromGateway(oauthServerSchema, "McpGateway.spec.oauthServer"),
    exporters: fromGateway(exportersSchema, "McpGateway.spec.exporters"),
    controlPlane: fromGateway(controlPlaneSchema, "McpGateway.spec.controlPlane"),
  };
  const workload = zodToStructural(gatewayWorkloadSchema, "McpGateway.spec");
  const gateway: JsonSchema = { type: "object", properties: gatewayProperties };
  const spec: JsonSchema = {
    type: "object",
    description: "One gateway: its policies, and which McpServers and IdentityProviders it serves",
    properties: { ...gatewayProperties, ...workload.properties },
  };
  return { spec, gateway: { schema: gateway, operatorKeys: Object.keys(workload.properties ?? {}) } };
}

function buildOrganizationPolicySpec(): { spec: JsonSchema; gateway: GatewayPart } {
  const gateway = fromGateway(organizationPolicySchema, "OrganizationPolicy.spec");
  return {
    spec: {
      ...gateway,
      description:
        "An organization's policy, served to its gateways by the control-plane API and merged with their own gateway_policy",
      properties: {
        ...gateway.properties,
        organizationId: {
          type: "string",
          minLength: 1,
          maxLength: 255,
          description: "The organization's id, as gateways see it (default metadata.name)",
        },
      },
    },
    gateway: { schema: gateway, operatorKeys: ["organizationId"] },
  };
}

export interface KindSchemas {
  spec: JsonSchema;
  status: JsonSchema;
  gateway: GatewayPart;
}

function build(): Record<Kind, KindSchemas> {
  const status = zodToStructural(statusSchema, "status");
  return {
    McpServer: { ...buildServerSpec(), status },
    IdentityProvider: { ...buildIdentityProviderSpec(), status },
    McpGateway: { ...buildGatewaySpec(), status },
    OrganizationPolicy: { ...buildOrganizationPolicySpec(), status },
  };
}

let cached: Record<Kind, KindSchemas> | undefined;

/** Built once per process: the conversion is deterministic. */
export function kindSchemas(): Record<Kind, KindSchemas> {
  cached ??= build();
  return cached;
}
