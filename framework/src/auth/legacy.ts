import {
  JWTAuthConfig,
  type JWTAuthConfigInput,
  StaticTokenConfig,
  type StaticTokenConfigInput,
} from "./config.ts";
import { configureAuth, registry } from "./registry.ts";

// The pre-0.2.0 helpers. Since 0.2.0 they no longer accept `required_scopes` (TypeError); scopes belong
// to the config object. Otherwise they keep working as thin, deprecated shims over configureAuth, so old
// auth.ts files keep their authentication instead of silently losing it.

function refuseRequiredScopes(name: string, options: object, replacement: string): void {
  if (options !== null && typeof options === "object" && "required_scopes" in options) {
    throw new TypeError(
      `${name}() no longer accepts required_scopes (removed in 0.2.0); use configureAuth(new ${replacement}({ ..., required_scopes: [...] }))`,
    );
  }
}

/** @deprecated Use configureAuth(new JWTAuthConfig({...})). Throws TypeError when given required_scopes. */
export function configureJwtAuth(options: Omit<JWTAuthConfigInput, "required_scopes">): void {
  refuseRequiredScopes("configureJwtAuth", options, "JWTAuthConfig");
  configureAuth(new JWTAuthConfig(options));
  registry().warnings.push("configureJwtAuth() is deprecated; use configureAuth(new JWTAuthConfig({...}))");
}

/** @deprecated Use configureAuth(new StaticTokenConfig({...})). Throws TypeError when given required_scopes. */
export function configureDevAuth(options: Omit<StaticTokenConfigInput, "required_scopes">): void {
  refuseRequiredScopes("configureDevAuth", options, "StaticTokenConfig");
  configureAuth(new StaticTokenConfig(options));
  registry().warnings.push(
    "configureDevAuth() is deprecated; use configureAuth(new StaticTokenConfig({...}))",
  );
}
