// Every /mcp request must carry a JWT access token from the identity provider, issued for this server's
// audience, with the scope tickets:read. Writing tickets additionally needs tickets:write (checked by the
// tool). Values come from the environment at start (see .env.example); a missing or wrong one stops the
// server instead of serving unauthenticated.
import { configureAuth, JWTAuthConfig } from "@svc-mcp/framework/auth";

configureAuth(
  new JWTAuthConfig({
    jwks_uri_env_var: "JWKS_URI",
    issuer_env_var: "JWT_ISSUER",
    audience_env_var: "JWT_AUDIENCE",
    required_scopes: ["tickets:read"],
  }),
);
