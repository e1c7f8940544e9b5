// Public module "@svc-mcp/framework/auth": what a project's auth.ts and its tools use: configureAuth and its helpers,
// the config objects, and the request's token and API key.

import { getApiKey, getAuthToken } from "./context.ts";
import { configureDevAuth, configureJwtAuth } from "./legacy.ts";
import { configureApiKey, configureAuth } from "./registry.ts";

export type {
  ApiKeyConfig,
  ApprovalDecision,
  ApprovalHook,
  AsymmetricAlgorithm,
  AuthConfig,
  AuthorizationRequestInfo,
  JWTAuthConfigInput,
  OAuthServerConfigInput,
  RemoteAuthConfigInput,
  StaticTokenConfigInput,
} from "./config.ts";
export { JWTAuthConfig, OAuthServerConfig, RemoteAuthConfig, StaticTokenConfig } from "./config.ts";
export type { AuthRequestContext } from "./context.ts";
export { getAuthInfo } from "./context.ts";
export { AuthConfigError } from "./errors.ts";
export { configureApiKey, configureAuth, configureDevAuth, configureJwtAuth, getApiKey, getAuthToken };

// The same functions under snake_case names, for auth.ts files written in that style.
export const configure_auth = configureAuth;
export const configure_api_key = configureApiKey;
export const get_api_key = getApiKey;
export const get_auth_token = getAuthToken;
export const configure_jwt_auth = configureJwtAuth;
export const configure_dev_auth = configureDevAuth;
