// Authentication for /mcp. As written, nothing is configured and /mcp is served WITHOUT authentication.
// Uncomment one block. A broken configuration stops the server at start; it never serves unauthenticated.
// Secrets come from the environment (a .env file for `svc build dev`), never from this file.

// import { configureAuth, JWTAuthConfig } from "@svc-mcp/framework/auth";
// configureAuth(
//   new JWTAuthConfig({
//     jwks_uri_env_var: "JWKS_URI",
//     issuer_env_var: "JWT_ISSUER",
//     audience_env_var: "JWT_AUDIENCE",
//     required_scopes: ["mcp:tools"],
//   }),
// );

// Development only (warns at start):
// import { configureAuth, StaticTokenConfig } from "@svc-mcp/framework/auth";
// configureAuth(
//   new StaticTokenConfig({
//     tokens: { "dev-token-123": { client_id: "dev", scopes: ["mcp:tools"] } },
//     required_scopes: ["mcp:tools"],
//   }),
// );

// Pass an upstream API key through to tools (no validation here): read it with getApiKey().
// import { configureApiKey } from "@svc-mcp/framework/auth";
// configureApiKey("x-api-key");

export {};
