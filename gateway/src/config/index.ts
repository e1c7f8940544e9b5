// `@svc-mcp/gateway/config`: the gateway configuration's schema, loader and validator (the operator uses it too).

export { CONTROL_PLANE_ENV } from "./centralized.ts";
export {
  deriveConfig,
  type GatewayConfig,
  type IdentityProviderConfig,
  PROJECT_IDP_ISSUER_TEMPLATE,
  PROJECT_IDP_JWKS_TEMPLATE,
  type ServerConfig,
} from "./derive.ts";
export { CONFIG_FILE_ENV, CONFIG_FILE_LOCATIONS, findConfigFile } from "./discover.ts";
export { type LoadedConfig, type LoadOptions, loadConfig } from "./load.ts";
export {
  type OrganizationPolicy,
  organizationPolicySchema,
  type PolicyDocument,
  policyDocumentSchema,
} from "./organization-policy.ts";
export { ConfigError, type ConfigProblem, formatProblem } from "./problems.ts";
export * from "./schema.ts";
export { apiKeyHeaderVariable, apiKeyVariable, serverEnvSuffix } from "./server-env.ts";
export { nearestKey } from "./suggest.ts";
export {
  type DeploymentMode,
  type ValidateTextOptions,
  type ValidationResult,
  validateConfigText,
  validateConfigValue,
} from "./validate.ts";
