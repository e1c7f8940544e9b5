import type {
  GatewayPolicy,
  ParsedGatewayConfig,
  ParsedIdentityProviderConfig,
  ParsedServerConfig,
  RbacMode,
  Visibility,
} from "./schema.ts";

// Values the configuration implies but need not spell out. Kept apart from the schema so the JSON Schema shows
// what a user writes, and the gateway gets every value resolved.

/** A server with its visibility and RBAC fields resolved (server value, else gateway_policy.server_rbac). */
export type ServerConfig = Omit<
  ParsedServerConfig,
  "visibility" | "rbac_enabled" | "rbac_mode" | "allowed_groups" | "denied_groups" | "capability_rbac_enabled"
> & {
  visibility: Visibility;
  rbac_enabled: boolean;
  rbac_mode: RbacMode;
  allowed_groups: string[];
  denied_groups: string[];
  capability_rbac_enabled: boolean;
};

/** A provider whose issuer and JWKS URI are always known (derived for project_idp). */
export type IdentityProviderConfig = Omit<ParsedIdentityProviderConfig, "issuer" | "jwks_uri"> & {
  issuer: string;
  jwks_uri: string;
};

export type GatewayConfig = Omit<ParsedGatewayConfig, "servers" | "identity_providers"> & {
  servers: ServerConfig[];
  identity_providers: IdentityProviderConfig[];
};

/** Where a project_idp's issuer and JWKS live when the file does not say; `{project_id}` is substituted. */
export const PROJECT_IDP_ISSUER_TEMPLATE = "https://api.descope.com/v1/apps/{project_id}";
export const PROJECT_IDP_JWKS_TEMPLATE = "https://api.descope.com/{project_id}/.well-known/jwks.json";

export function deriveServer(server: ParsedServerConfig, policy: GatewayPolicy): ServerConfig {
  const defaults = policy.server_rbac;
  return {
    ...server,
    visibility: server.server_type === "inhouse" ? "internal" : (server.visibility ?? "third_party"),
    rbac_enabled: server.rbac_enabled ?? defaults.rbac_enabled,
    rbac_mode: server.rbac_mode ?? defaults.rbac_mode,
    allowed_groups: server.allowed_groups ?? defaults.allowed_groups,
    denied_groups: server.denied_groups ?? defaults.denied_groups,
    capability_rbac_enabled: server.capability_rbac_enabled ?? defaults.capability_rbac_enabled,
  };
}

export function deriveIdentityProvider(idp: ParsedIdentityProviderConfig): IdentityProviderConfig {
  const project = encodeURIComponent(idp.project_id ?? "");
  return {
    ...idp,
    // The schema guarantees issuer and jwks_uri for every other type, and project_id for project_idp.
    issuer: idp.issuer ?? PROJECT_IDP_ISSUER_TEMPLATE.replace("{project_id}", project),
    jwks_uri: idp.jwks_uri ?? PROJECT_IDP_JWKS_TEMPLATE.replace("{project_id}", project),
  };
}

export function deriveConfig(parsed: ParsedGatewayConfig): GatewayConfig {
  return {
    ...parsed,
    identity_providers: parsed.identity_providers.map(deriveIdentityProvider),
    servers: parsed.servers.map((server) => deriveServer(server, parsed.gateway_policy)),
  };
}
