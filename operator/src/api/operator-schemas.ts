import { z } from "zod";

// The parts of the custom resources that belong to the operator rather than to the gateway config: which
// resources a gateway selects, how a framework-built server runs, and status. The gateway's own fields come
// from @svc-mcp/gateway/config (see resource-schemas.ts), never retyped here.

/** Kubernetes core types embedded as-is (EnvVar, ResourceRequirements, ...): the API server validates
 *  them when the Deployment is applied, so the CRD keeps them open instead of copying their schema. */
const kubernetesObject = (what: string) =>
  z.looseObject({}).describe(what).meta({ "x-kubernetes-preserve-unknown-fields": true });

export const labelSelectorSchema = z.strictObject({
  namespaces: z
    .array(z.string().min(1))
    .optional()
    .describe('Namespaces to select from; absent means the McpGateway\'s own namespace, ["*"] means all'),
  matchLabels: z.record(z.string(), z.string()).optional().describe("Labels a resource must carry"),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string().min(1),
        operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional()
    .describe("Set-based label requirements, as in a Kubernetes label selector"),
});

export const DEFAULT_SERVER_PORT = 8080; // what `svc init`'s Dockerfile sets (PORT=8080)
export const DEFAULT_SERVER_PATH = "/mcp";

export const serverDeploymentSchema = z
  .strictObject({
    image: z.string().min(1).describe("Container image of a server built with the svc framework"),
    replicas: z.int().min(0).max(1000).optional().describe("Pod replicas (default 1)"),
    port: z
      .int()
      .min(1)
      .max(65535)
      .optional()
      .describe(`Container port; passed as PORT (default ${DEFAULT_SERVER_PORT})`),
    path: z.string().regex(/^\//).optional().describe(`MCP endpoint path (default ${DEFAULT_SERVER_PATH})`),
    imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
    serviceAccountName: z.string().min(1).optional(),
    env: z
      .array(kubernetesObject("EnvVar"))
      .optional()
      .describe("Container environment (Kubernetes EnvVar list)"),
    envFrom: z.array(kubernetesObject("EnvFromSource")).optional().describe("Kubernetes EnvFromSource list"),
    resources: kubernetesObject("Kubernetes ResourceRequirements").optional(),
    securityContext: kubernetesObject(
      "Container SecurityContext; a restricted one is used when absent",
    ).optional(),
  })
  .describe("Run this server in the cluster (a Deployment and a Service); the gateway URL is derived");

export const CONDITION_TYPES = ["Accepted", "Programmed", "Ready"] as const;

/** metav1.Condition's bound on a message. */
export const CONDITION_MESSAGE_MAX = 32768;

export const conditionSchema = z.strictObject({
  type: z.enum(CONDITION_TYPES),
  status: z.enum(["True", "False", "Unknown"]),
  // API conventions: a condition's reason is one CamelCase word a machine can switch on; the message is
  // for people.
  reason: z
    .string()
    .regex(/^[A-Z][A-Za-z0-9]*$/)
    .max(1024)
    .describe("Why the condition has its status: one CamelCase word"),
  message: z.string().max(CONDITION_MESSAGE_MAX).describe("Human-readable detail"),
  lastTransitionTime: z
    .string()
    .describe("When status last changed (RFC 3339)")
    .meta({ format: "date-time" }),
  observedGeneration: z.int().min(0).optional(),
});

export const statusSchema = z.strictObject({
  observedGeneration: z.int().min(0).optional().describe("The metadata.generation this status describes"),
  conditions: z
    .array(conditionSchema)
    .optional()
    .meta({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] }),
  url: z
    .string()
    .optional()
    .describe("Where the gateway reaches the server, or where clients reach the gateway"),
  servers: z.int().min(0).optional().describe("McpGateway: servers in the rendered configuration"),
  identityProviders: z
    .int()
    .min(0)
    .optional()
    .describe("McpGateway: identity providers in the rendered configuration"),
  configMap: z.string().optional().describe("McpGateway: the ConfigMap holding the rendered gateway YAML"),
  controlPlane: z
    .strictObject({
      gatewayId: z.string().describe("The gateway id that reported"),
      lastHeartbeat: z
        .string()
        .describe("When its last heartbeat arrived (RFC 3339)")
        .meta({ format: "date-time" }),
      health: z.enum(["HEALTHY", "DEGRADED", "UNHEALTHY"]).describe("Its health level"),
      mode: z.enum(["distributed", "centralized"]).optional().describe("Its deployment mode"),
      version: z.string().max(64).optional().describe("Its svc-gateway version"),
      configGeneration: z.int().min(0).optional().describe("Its configuration snapshot generation"),
      policyGeneration: z.int().min(0).optional().describe("The OrganizationPolicy generation it enforces"),
      requests: z.int().min(0).optional().describe("MCP requests it served since it started"),
      errors: z.int().min(0).optional().describe("Of those, answered with HTTP 5xx"),
    })
    .optional()
    .describe("McpGateway: what its gateway last reported to the control plane (heartbeat)"),
});

export type Condition = z.infer<typeof conditionSchema>;
export type ResourceStatus = z.infer<typeof statusSchema>;
export type LabelSelector = z.infer<typeof labelSelectorSchema>;
export type ServerDeployment = z.infer<typeof serverDeploymentSchema>;

const secretKeyRef = (what: string) =>
  z
    .strictObject({
      secretKeyRef: z.strictObject({
        name: z.string().min(1).describe("Secret name"),
        key: z.string().min(1).describe("Key in the Secret"),
      }),
    })
    .describe(`${what}; read from a Secret in the gateway's namespace, never copied into the ConfigMap`);

/**
 * The gateway's OAuth keys: environment variables of the gateway container, not config fields, because every replica
 * must read the same ones from one Secret (gateway/docs/oauth-server.md, gateway/docs/upstream-oauth.md). The KV key
 * seals both the OAuth server's records and the upstream tokens of upstream_auth_type oauth; the signing keys are the
 * OAuth server's alone.
 */
export const oauthServerKeysSchema = z
  .strictObject({
    signingKeys: secretKeyRef(
      "JWKS of private signing keys, JSON (SVC_OAUTH_SIGNING_KEYS); required with oauthServer",
    ).optional(),
    kvKey: secretKeyRef(
      "32 random bytes, base64, sealing the KV records: the OAuth server's and the upstream OAuth tokens (SVC_OAUTH_KV_KEY)",
    ),
    registrationToken: secretKeyRef(
      "Initial access token Dynamic Client Registration requires (SVC_OAUTH_REGISTRATION_TOKEN); absent: open registration",
    ).optional(),
  })
  .describe(
    "The gateway's OAuth keys; required with oauthServer, and kvKey with any McpServer of upstreamAuthType oauth (the default)",
  );

/** Environment variable of each oauthServerKeys field, as the gateway reads it. */
export const OAUTH_SERVER_KEY_VARIABLES = {
  signingKeys: "SVC_OAUTH_SIGNING_KEYS",
  kvKey: "SVC_OAUTH_KV_KEY",
  registrationToken: "SVC_OAUTH_REGISTRATION_TOKEN",
} as const;

export type OAuthServerKeys = z.infer<typeof oauthServerKeysSchema>;

/**
 * How a gateway in distributed or centralized mode is known to the control plane the operator serves. The API key is
 * never stored here or in the operator: the referenced Secret key holds its SHA-256 (hex), compared in constant time.
 */
export const controlPlaneClientSchema = z
  .strictObject({
    gatewayId: z.uuid().describe("The gateway's control_plane.gateway_id"),
    organizationPolicy: z
      .string()
      .min(1)
      .describe("The OrganizationPolicy (same namespace) whose organization this gateway belongs to"),
    apiKeySha256: secretKeyRef(
      "SHA-256 of the gateway's control_plane.api_key, 64 hex digits (echo -n $KEY | sha256sum)",
    ),
  })
  .describe("This gateway is served by the operator's control-plane API (distributed or centralized mode)");

export type ControlPlaneClient = z.infer<typeof controlPlaneClientSchema>;

export const gatewayWorkloadSchema = z.strictObject({
  controlPlaneClient: controlPlaneClientSchema.optional(),
  oauthServerKeys: oauthServerKeysSchema.optional(),
  configMapName: z
    .string()
    .min(1)
    .optional()
    .describe("ConfigMap to write the gateway YAML to (default <name>-config)"),
  configKey: z.string().min(1).optional().describe("Key of the YAML in the ConfigMap (default config.yaml)"),
  deploymentName: z
    .string()
    .min(1)
    .optional()
    .describe("Gateway Deployment that receives secretKeyRef env entries (default: the McpGateway's name)"),
  containerName: z.string().min(1).optional().describe("Its gateway container (default gateway)"),
  serverSelector: labelSelectorSchema
    .optional()
    .describe("Which McpServers this gateway serves (default: all in its namespace)"),
  identityProviderSelector: labelSelectorSchema
    .optional()
    .describe("Which IdentityProviders it trusts (default: all in its namespace)"),
});
