import { z } from "zod";
import { type CapabilityKind, textProblem } from "../mcp/canonical-form.ts";
import { compileCustomPattern } from "./custom-pattern.ts";
import {
  flag,
  httpsUrl,
  httpUrl,
  nameField,
  nonEmptyString,
  oneOf,
  secondsField,
  stringList,
} from "./fields.ts";
import { firewallPolicySchema, serverFirewallSchema } from "./firewall-schema.ts";
import { ENTITY_TYPES, unknownEntityTypeMessage } from "./pii-entities.ts";

// The gateway's YAML configuration, the single source of truth: the loader, `svc-gateway
// validate`, the operator and the generated JSON Schema all use these definitions. Rules that span several
// objects (unique names, idp references, RBAC mode agreement) live in rules.ts; values derived from others
// (visibility, server RBAC defaults, project_idp URLs) in derive.ts.

const RBAC_MODES = ["allow", "deny"] as const;

// ---- control_plane ---------------------------------------------------------------------------------------

export const controlPlaneSchema = z
  .strictObject({
    url: httpUrl("Control plane URL (required, with api_key and gateway_id)"),
    api_key: nonEmptyString("API key the gateway presents to the control plane; use ${ENV_VAR}"),
    gateway_id: z.uuid({ error: "must be a UUID" }).describe("This gateway's identifier (UUID)"),
    timeout: secondsField(5, 120, 30, "Control plane request timeout"),
    cache_ttl: secondsField(60, 3600, 300, "Policy cache TTL"),
    organization_id: nonEmptyString(
      "Organization; resolved from the control plane at activation when unset",
    ).optional(),
  })
  .describe(
    "Presence activates Distributed mode: organization policy and monitoring come from the control plane (docs/control-plane.md)",
  );

// ---- identity_providers[] ----------------------------------------------------------------------------------

/** Empty, e.g. `${VAR:}` with VAR unset, means "not configured": group sync is off for that provider. */
const groupSyncCredential = (what: string) =>
  z
    .string({ error: "must be a string" })
    .describe(`${what}; empty means not configured (group sync off)`)
    .optional();

export const IDENTITY_PROVIDER_TYPES = ["hosted_idp", "directory_idp", "project_idp"] as const;

export const identityProviderSchema = z
  .strictObject({
    name: nameField("Unique provider name"),
    type: oneOf(IDENTITY_PROVIDER_TYPES, "Provider type"),
    issuer: httpUrl("OIDC issuer URL; required except for project_idp, where it is derived").optional(),
    jwks_uri: httpUrl("JWKS URL; required except for project_idp, where it is derived").optional(),
    userinfo_endpoint: httpUrl(
      "Userinfo URL; asked (with the caller's token) for groups when the access token carries none",
    ).optional(),
    api_identifiers: stringList("API audience identifiers; a token's aud must match one").default([]),
    timeout: secondsField(1, 60, 10, "Request timeout towards the provider"),
    client_id: groupSyncCredential("Management API client id, for group sync"),
    client_secret: groupSyncCredential("Management API client secret, for group sync"),
    tenant_id: nonEmptyString("Tenant; required for directory_idp, optional for project_idp").optional(),
    project_id: nonEmptyString("Project identifier; required for project_idp").optional(),
    management_key: groupSyncCredential("Management key for group sync (project_idp)"),
    // -- where group sync and the vendor-connect sign-in reach this provider (docs/access.md, docs/upstream-oauth.md)
    management_url: httpUrl(
      "Group sync: base URL of the management API. Default: hosted_idp the issuer's origin; directory_idp the Microsoft Graph of the issuer's cloud (https://graph.microsoft.com; national clouds e.g. https://graph.microsoft.us); project_idp the issuer's regional API host (https://api.<region>.descope.com), else https://api.descope.com",
    ).optional(),
    management_token_url: httpUrl(
      "Group sync: token endpoint for the management API's client-credentials token (hosted_idp, directory_idp). Default: hosted_idp {management_url}/oauth/token; directory_idp {the issuer's login host}/{tenant_id}/oauth2/v2.0/token",
    ).optional(),
    login_client_id: nonEmptyString(
      "The gateway's web-login client at this provider (authorization code; redirect URI {SVC_PUBLIC_URL}/oauth/upstream/login): confirms who opens a vendor-connect link",
    ).optional(),
    login_client_secret: nonEmptyString("Secret of login_client_id").optional(),
  })
  .superRefine((idp, ctx) => {
    // What each provider type cannot work without: issuer and jwks_uri (except project_idp), project_id for
    // project_idp, tenant_id for directory_idp.
    if (idp.type !== "project_idp") {
      for (const field of ["issuer", "jwks_uri"] as const) {
        if (idp[field] === undefined) {
          ctx.addIssue({ code: "custom", path: [field], message: `is required for type ${idp.type}` });
        }
      }
    }
    if (idp.type === "project_idp" && idp.project_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["project_id"], message: "is required for type project_idp" });
    }
    if (idp.type === "directory_idp" && idp.tenant_id === undefined) {
      ctx.addIssue({ code: "custom", path: ["tenant_id"], message: "is required for type directory_idp" });
    }
    // Group sync credentials: the ones this type uses come as a whole (half a pair would silently mean "off"); the
    // ones it does not use are refused rather than ignored.
    const given = (field: "client_id" | "client_secret" | "management_key") =>
      idp[field] !== undefined && idp[field] !== "";
    const unused =
      idp.type === "project_idp" ? (["client_id", "client_secret"] as const) : (["management_key"] as const);
    for (const field of unused) {
      if (given(field)) {
        const users = field === "management_key" ? "project_idp" : "hosted_idp and directory_idp";
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `is used only by ${users} (group sync); remove it`,
        });
      }
    }
    if (idp.type === "project_idp" && idp.management_token_url !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["management_token_url"],
        message: "is not used by project_idp (its management key needs no token); remove it",
      });
    }
    if ((idp.login_client_id === undefined) !== (idp.login_client_secret === undefined)) {
      const missing = idp.login_client_id === undefined ? "login_client_id" : "login_client_secret";
      ctx.addIssue({
        code: "custom",
        path: [missing],
        message: "is required with the other login_client_ field",
      });
    }
    if (idp.type !== "project_idp" && given("client_id") !== given("client_secret")) {
      const missing = given("client_id") ? "client_secret" : "client_id";
      ctx.addIssue({
        code: "custom",
        path: [missing],
        message: "is required with client_id/client_secret for group sync (leave both empty to turn it off)",
      });
    }
  });

// ---- scrubbing policy (servers[].security and gateway_policy.scrubbing) ----------------------------------

export const customRuleSchema = z
  .strictObject({
    pattern: nonEmptyString(
      "RE2 regular expression, matched in linear time: no backreferences or lookaround; (?i) for case-insensitive",
    ),
    method: oneOf(["mask", "remove", "hash", "replace"], "What to do with a match"),
    replacement: z
      .string({ error: "must be a string" })
      .describe("Replacement text; required for method replace")
      .optional(),
  })
  .superRefine((rule, ctx) => {
    // Compiled exactly as the scrubbing engine compiles it, so a pattern that loads is a pattern that runs.
    const compiled = compileCustomPattern(rule.pattern);
    if (!compiled.ok) ctx.addIssue({ code: "custom", path: ["pattern"], message: compiled.reason });
    if (rule.method === "replace" && rule.replacement === undefined) {
      ctx.addIssue({ code: "custom", path: ["replacement"], message: "is required when method is replace" });
    }
  });

export const recognizerSchema = z.strictObject({
  entity_type: z
    .enum(ENTITY_TYPES, { error: (issue) => unknownEntityTypeMessage(issue.input) })
    .describe("Entity type of a built-in recognizer (Presidio's names)"),
  enabled: flag(true, "Turns the recognizer on"),
  replacement: z.string({ error: "must be a string" }).describe("Custom replacement text").optional(),
});

export const scrubbingPolicySchema = z.strictObject({
  enabled: flag(false, "Turns PII scrubbing on (any layer that enables it turns it on)"),
  sensitive_fields: stringList("Field names always masked as [MASKED]").default([]),
  whitelist_fields: stringList("Field names never scrubbed").default([]),
  custom_rules: z.array(customRuleSchema).default([]).describe("Regex rules"),
  recognizers: z.array(recognizerSchema).default([]).describe("Built-in recognizer settings"),
});

// ---- servers[] ----------------------------------------------------------------------------------------------

export const CAPABILITY_PATTERN = /^(tools|resources|prompts)\/.+$/;

export const capabilityOverrideSchema = z.strictObject({
  capability: z
    .string({ error: "must be a string" })
    .regex(CAPABILITY_PATTERN, {
      error:
        "must look like tools/<name>, tools/*, resources/<uri>, resources/*, prompts/<name> or prompts/*",
    })
    .superRefine((pattern, ctx) => {
      // A pattern no request can spell (a control character, white space at either end) would never match, and the
      // restriction it was written for would silently not exist: refused like such a name in a request.
      const slash = pattern.indexOf("/");
      const kind = pattern.slice(0, slash) as CapabilityKind;
      const problem = textProblem("the name", pattern.slice(slash + 1), kind);
      if (problem !== undefined)
        ctx.addIssue({ code: "custom", message: `${problem}: it could never match` });
    })
    .describe("Capability pattern: tools/*, tools/<name>, resources/<uri>, prompts/<name>"),
  rbac_enabled: flag(true, "RBAC for this capability"),
  rbac_mode: oneOf(RBAC_MODES, "allow: only allowed_groups may use it; deny: denied_groups may not").default(
    "allow",
  ),
  allowed_groups: stringList("Groups with access (mode allow)").default([]),
  denied_groups: stringList(
    "Groups refused (mode deny); an svc extension mirroring the server level",
  ).default([]),
});

export const SERVER_TYPES = ["inhouse", "third_party"] as const;
export const VISIBILITIES = ["third_party", "internal", "public"] as const;
export const UPSTREAM_AUTH_TYPES = ["oauth", "none", "api_key"] as const;

export const serverSchema = z
  .strictObject({
    name: nameField("Unique server name; the path segment in /{name}/mcp").regex(/^[^/\s]*$/, {
      error: "must not contain '/' or white space: it is the path segment in /{name}/mcp",
    }),
    url: httpUrl("Upstream MCP endpoint URL"),
    description: z
      .string({ error: "must be a string" })
      .default("")
      .describe("Description; the resource_name of the server's protected-resource metadata"),
    server_type: oneOf(SERVER_TYPES, "A label; inhouse servers are always visibility internal").default(
      "third_party",
    ),
    enabled: flag(true, "Enables the server; a disabled server answers 404"),
    visibility: oneOf(
      VISIBILITIES,
      "A label: the gateway does not act on it (default third_party; internal for inhouse servers)",
    ).optional(),
    upstream_auth_type: oneOf(
      UPSTREAM_AUTH_TYPES,
      "Authentication towards the upstream: oauth (per-user tokens through the vendor's consent, client_credentials for machines; docs/upstream-oauth.md), none, or api_key",
    ).default("oauth"),
    session_affinity: flag(
      true,
      "Keep every request of a session on the upstream instance that opened it, across replicas (pinned in the KV store); false: each request goes to the next instance",
    ),
    idp: nameField(
      "The only identity provider whose tokens this server accepts (its groups, its metadata issuer); must name one in identity_providers",
    ).optional(),
    rbac_enabled: z
      .boolean({ error: "must be true or false" })
      .describe("Server-level RBAC (default: gateway_policy.server_rbac)")
      .optional(),
    rbac_mode: oneOf(
      RBAC_MODES,
      "allow is a whitelist, deny a blacklist (default: gateway_policy.server_rbac)",
    ).optional(),
    allowed_groups: stringList(
      "Groups admitted in mode allow (default: gateway_policy.server_rbac)",
    ).optional(),
    denied_groups: stringList("Groups refused in mode deny (default: gateway_policy.server_rbac)").optional(),
    rbac_audit: flag(true, "Log RBAC decisions to the audit log"),
    capability_rbac_enabled: z
      .boolean({ error: "must be true or false" })
      .describe("Enables per-capability overrides (default: gateway_policy.server_rbac)")
      .optional(),
    capability_overrides: z.array(capabilityOverrideSchema).default([]).describe("Per-capability rules"),
    preregistered_client_id: nonEmptyString(
      "Pre-registered OAuth client id at the upstream's authorization server; bypasses Dynamic Client Registration",
    ).optional(),
    preregistered_client_secret: nonEmptyString(
      "Pre-registered OAuth client secret; use ${ENV_VAR}",
    ).optional(),
    auth_server_url: httpUrl(
      "OAuth issuer override, for upstreams that publish no protected-resource metadata",
    ).optional(),
    scopes_override: nonEmptyString(
      "Space-separated scopes requested instead of those the upstream advertises",
    ).optional(),
    security: scrubbingPolicySchema
      .optional()
      .describe(
        "Per-server scrubbing policy, merged with the gateway's (union; the server's replacements win)",
      ),
    firewall: serverFirewallSchema
      .optional()
      .describe("Per-server prompt-injection firewall: may only tighten gateway_policy.firewall"),
  })
  .superRefine((server, ctx) => {
    if (
      server.server_type === "inhouse" &&
      server.visibility !== undefined &&
      server.visibility !== "internal"
    ) {
      ctx.addIssue({
        code: "custom",
        path: ["visibility"],
        message: `an inhouse server is always internal; remove visibility or set it to internal (was ${server.visibility})`,
      });
    }
    if (server.preregistered_client_secret !== undefined && server.preregistered_client_id === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["preregistered_client_id"],
        message: "is required when preregistered_client_secret is set",
      });
    }
  });

// ---- gateway_policy ------------------------------------------------------------------------------------------

export const serverRbacDefaultsSchema = z.strictObject({
  rbac_enabled: flag(false, "Server-level RBAC default for servers"),
  rbac_mode: oneOf(RBAC_MODES, "Default RBAC mode for servers").default("allow"),
  allowed_groups: stringList("Default allowed groups").default([]),
  denied_groups: stringList("Default denied groups").default([]),
  capability_rbac_enabled: flag(false, "Default for servers' capability_rbac_enabled"),
  deny_requires_groups: flag(
    true,
    "Mode deny (server and capability) admits only callers with at least one group, from the token or group sync: a caller whose groups are unknown cannot be checked against a deny list. false: such callers pass deny lists",
  ),
});

const defaultGroups = (what: string) =>
  z
    .strictObject({ default_groups: stringList(`Groups allowed ${what} by default`).default([]) })
    .prefault({});

export const capabilityRbacDefaultsSchema = z.strictObject({
  read_only: defaultGroups("tools annotated readOnlyHint"),
  destructive: defaultGroups("tools annotated destructiveHint"),
  unspecified: defaultGroups("tools with neither annotation"),
});

export const localServersPolicySchema = z.strictObject({
  enabled: flag(false, "Turns the local servers policy on (servers defined in this YAML, by group)"),
  mode: oneOf(RBAC_MODES, "allow admits, deny blocks the listed groups' local servers").default("allow"),
  groups: stringList("Groups the policy applies to").nullable().default(null),
});

export const gatewayPolicySchema = z.strictObject({
  scrubbing: scrubbingPolicySchema.prefault({}).describe("Gateway-wide scrubbing policy"),
  firewall: firewallPolicySchema.prefault({}).describe("Gateway-wide prompt-injection firewall"),
  server_rbac: serverRbacDefaultsSchema.prefault({}).describe("Defaults for servers' RBAC fields"),
  capability_rbac: capabilityRbacDefaultsSchema.prefault({}).describe("Default groups by tool annotation"),
  local_servers: localServersPolicySchema.prefault({}).describe("Blocks or admits locally defined servers"),
});

// ---- security -------------------------------------------------------------------------------------------------

export const RATE_LIMIT_RANGES = {
  requests_per_minute: { min: 1, max: 5000 },
  window_seconds: { min: 10, max: 300 },
} as const;

export const rateLimitingSchema = z
  .strictObject({
    enabled: flag(true, "Per-user rate limiting"),
    requests_per_minute: z
      .int({ error: "must be a whole number" })
      .default(1000)
      .describe("Requests per user per window (1-5000)"),
    window_seconds: z
      .int({ error: "must be a whole number" })
      .default(60)
      .describe("Window length in seconds (10-300)"),
  })
  .superRefine((limits, ctx) => {
    // Rule 14: the ranges bind only when rate limiting is on; a disabled block may keep any numbers.
    if (!limits.enabled) return;
    for (const [field, { min, max }] of Object.entries(RATE_LIMIT_RANGES)) {
      const value = limits[field as keyof typeof RATE_LIMIT_RANGES];
      if (value < min || value > max) {
        ctx.addIssue({
          code: "custom",
          path: [field],
          message: `must be a whole number from ${min} to ${max} when rate limiting is enabled`,
        });
      }
    }
  });

export const securitySchema = z.strictObject({
  replay_protection: z.strictObject({ enabled: flag(true, "Replay protection") }).prefault({}),
  rate_limiting: rateLimitingSchema.prefault({}),
});

// ---- oauth_server --------------------------------------------------------------------------------------------

/** Schemes a browser acts on itself (script, inline content, files) or that are not private-use: never redirect URIs. */
export const SCHEMES_NEVER_REDIRECTED_TO = [
  "http",
  "https",
  "javascript",
  "data",
  "file",
  "blob",
  "about",
  "vbscript",
  "filesystem",
  "ftp",
  "ws",
  "wss",
  "mailto",
  "tel",
];

export const oauthRegistrationSchema = z.strictObject({
  enabled: flag(
    true,
    "Dynamic Client Registration (RFC 7591) at /oauth/register; false: clients identify with Client ID Metadata Documents only",
  ),
  client_credentials: flag(
    false,
    "Open registration may register machine clients (grant client_credentials): anyone reaching the gateway then gets a token. Registrations carrying SVC_OAUTH_REGISTRATION_TOKEN may always",
  ),
  unused_client_ttl: secondsField(
    600,
    2592000,
    86400,
    "A registered client that obtains no token within this long is forgotten; each token it obtains keeps it for refresh_token_ttl more",
  ),
  redirect_uri_schemes: z
    .array(
      z
        .string({ error: "must be a string" })
        .regex(/^[a-z][a-z0-9+.-]*$/, { error: "must be a URI scheme in lower case, without ':'" })
        .refine((scheme) => !SCHEMES_NEVER_REDIRECTED_TO.includes(scheme), {
          error: `must be a private-use scheme: ${SCHEMES_NEVER_REDIRECTED_TO.join(", ")} are not`,
        }),
      { error: "must be a list of strings" },
    )
    .default([])
    .describe(
      "Private-use URI schemes (RFC 8252 7.1) allowed in redirect URIs besides https, loopback http and reverse-domain schemes such as com.example.app, e.g. cursor",
    ),
});

export const oauthClientMetadataDocumentsSchema = z.strictObject({
  enabled: flag(
    true,
    "Clients may identify with an https client_id URL whose Client ID Metadata Document the gateway fetches",
  ),
  trusted_origins: z
    .array(
      httpsUrl("An https origin").refine((url) => new URL(url).origin === url.replace(/\/$/, ""), {
        error: "must be an origin (https://host[:port]), without a path",
      }),
    )
    .default([])
    .describe(
      "Origins whose documents may be fetched from private, loopback or link-local addresses (an internal client registry); every other document host must resolve to public addresses only",
    ),
});

export const oauthConsentSchema = z.strictObject({
  known_clients: z
    .array(
      z.strictObject({
        name: nonEmptyString("The client's name as users know it"),
        redirects: stringList(
          "Where its codes go: host names (subdomains included), loopback, or scheme:<name>",
        ),
      }),
    )
    .default([])
    .describe(
      "Clients besides the built-in ones (Claude, ChatGPT, VS Code, Cursor…) whose look-alikes the consent page warns about when their redirect goes elsewhere",
    ),
});

export const oauthServerSchema = z.strictObject({
  issuer: httpUrl("Issuer URL (default: the gateway's own URL)").optional(),
  token_ttl: secondsField(300, 86400, 3600, "Access token TTL"),
  refresh_token_ttl: secondsField(3600, 2592000, 604800, "Refresh token TTL"),
  authorization_code_ttl: secondsField(30, 600, 60, "Authorization code TTL"),
  idp_client_id: nonEmptyString("Client id at the upstream identity provider").optional(),
  idp_client_secret: nonEmptyString(
    "Client secret at the upstream identity provider; use ${ENV_VAR}",
  ).optional(),
  registration: oauthRegistrationSchema
    .prefault({})
    .describe("Dynamic Client Registration: on or off, machine clients, lifetime, redirect URI schemes"),
  client_id_metadata_documents: oauthClientMetadataDocumentsSchema
    .prefault({})
    .describe("Client ID Metadata Documents (https client_id URLs) beside registration"),
  consent: oauthConsentSchema.prefault({}).describe("The consent page"),
});

// ---- exporters -----------------------------------------------------------------------------------------------

const EXPORTER_ENABLED = "Turns the exporter on: it gets every audit event (docs/access.md, Audit trail)";

export const searchIndexExporterSchema = z
  .strictObject({
    name: nameField("Exporter name, unique among search_index exporters"),
    enabled: flag(true, EXPORTER_ENABLED),
    url: httpUrl("Self-hosted URL; use url or cloud_id, never both").optional(),
    cloud_id: nonEmptyString("Hosted-cloud id; use url or cloud_id, never both").optional(),
    api_key: nonEmptyString("API key; use ${ENV_VAR}").optional(),
    index_prefix: z
      .string({ error: "must be a string" })
      .regex(/^[a-z0-9][a-z0-9._-]*$/, {
        error: "must be lower case letters, digits, '.', '_' or '-' (an index name)",
      })
      .default("svc-gateway")
      .describe("Indices are named <prefix>-YYYY.MM.DD"),
    timeout: secondsField(5, 120, 30, "Request timeout"),
  })
  .superRefine((exporter, ctx) => {
    // Rule 11. Both is always an error; neither only matters when the exporter would run.
    if (exporter.url !== undefined && exporter.cloud_id !== undefined) {
      ctx.addIssue({ code: "custom", path: ["cloud_id"], message: "use url or cloud_id, not both" });
    } else if (exporter.enabled && exporter.url === undefined && exporter.cloud_id === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: "url or cloud_id is required when the exporter is enabled",
      });
    }
  });

export const OTEL_PROTOCOLS = ["grpc", "http/protobuf", "http/json"] as const;

export const otelExporterSchema = z
  .strictObject({
    name: nameField("Exporter name, unique among otel exporters"),
    enabled: flag(true, EXPORTER_ENABLED),
    endpoint: httpUrl("OTLP endpoint URL; required when enabled").optional(),
    protocol: oneOf(OTEL_PROTOCOLS, "OTLP protocol").default("grpc"),
    service_name: nonEmptyString("service.name of exported data").default("svc-gateway"),
    timeout: secondsField(5, 120, 30, "Export timeout"),
    export_logs: flag(true, "Audit logs as OTLP logs"),
    export_metrics: flag(false, "Gateway metrics"),
    export_traces: flag(false, "Request traces"),
    headers: z
      .record(
        z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { error: "must be a valid HTTP header name" }),
        z.string({ error: "must be a string" }),
      )
      .default({})
      .describe("Extra HTTP headers"),
  })
  .superRefine((exporter, ctx) => {
    // Rule 12.
    if (exporter.enabled && exporter.endpoint === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["endpoint"],
        message: "is required when the exporter is enabled",
      });
    }
  });

export const SIEM_REQUIRED_FIELDS = [
  "dcr_immutable_id",
  "dcr_endpoint",
  "tenant_id",
  "client_id",
  "client_secret",
] as const;

export const siemExporterSchema = z
  .strictObject({
    name: nameField("Exporter name, unique among siem exporters"),
    enabled: flag(true, EXPORTER_ENABLED),
    dcr_immutable_id: nonEmptyString("Data Collection Rule immutable id; required when enabled").optional(),
    dcr_endpoint: httpsUrl("Logs ingestion endpoint (https); required when enabled").optional(),
    dcr_stream_name: nonEmptyString("Stream of the custom table").default("Custom-SvcGateway_CL"),
    tenant_id: nonEmptyString("Directory tenant id; required when enabled").optional(),
    client_id: nonEmptyString("Service principal id; required when enabled").optional(),
    client_secret: nonEmptyString(
      "Service principal secret; use ${ENV_VAR}; required when enabled",
    ).optional(),
    timeout: secondsField(5, 120, 30, "Request timeout"),
  })
  .superRefine((exporter, ctx) => {
    // Rule 13.
    if (!exporter.enabled) return;
    for (const field of SIEM_REQUIRED_FIELDS) {
      if (exporter[field] === undefined) {
        ctx.addIssue({ code: "custom", path: [field], message: "is required when the exporter is enabled" });
      }
    }
  });

export const exportersSchema = z.strictObject({
  search_index: z.array(searchIndexExporterSchema).default([]).describe("Search-index exporters"),
  otel: z.array(otelExporterSchema).default([]).describe("OpenTelemetry (OTLP) exporters"),
  siem: z.array(siemExporterSchema).default([]).describe("SIEM (logs ingestion) exporters"),
});

// ---- root ----------------------------------------------------------------------------------------------------

export const gatewayConfigSchema = z
  .strictObject({
    version: z.literal("1.0", { error: 'must be "1.0"' }).describe('Schema version; must be exactly "1.0"'),
    control_plane: controlPlaneSchema.optional(),
    identity_providers: z.array(identityProviderSchema).default([]).describe("Identity providers"),
    servers: z.array(serverSchema).default([]).describe("Upstream MCP servers"),
    gateway_policy: gatewayPolicySchema.prefault({}).describe("Gateway-level policy defaults"),
    security: securitySchema.prefault({}).describe("Replay protection and rate limiting"),
    oauth_server: oauthServerSchema
      .optional()
      .describe("The gateway's own OAuth authorization server; present turns it on (docs/oauth-server.md)"),
    exporters: exportersSchema.prefault({}).describe("Audit-log export destinations"),
  })
  .describe("svc-gateway configuration");

export type ParsedGatewayConfig = z.output<typeof gatewayConfigSchema>;
export type ParsedServerConfig = z.output<typeof serverSchema>;
export type ParsedIdentityProviderConfig = z.output<typeof identityProviderSchema>;
export type GatewayPolicy = z.output<typeof gatewayPolicySchema>;
export type ScrubbingPolicy = z.output<typeof scrubbingPolicySchema>;
export type CapabilityOverride = z.output<typeof capabilityOverrideSchema>;
export type SecurityConfig = z.output<typeof securitySchema>;
export type OAuthServerConfig = z.output<typeof oauthServerSchema>;
export type ExportersConfig = z.output<typeof exportersSchema>;
export type ControlPlaneConfig = z.output<typeof controlPlaneSchema>;
export type RbacMode = (typeof RBAC_MODES)[number];
export type Visibility = (typeof VISIBILITIES)[number];
