// The per-server environment variables the gateway reads for `upstream_auth_type: api_key`. One rule, used by the
// gateway when it builds a route and by the operator when it renders the env entries that fill them from a Secret.

/** `my-server.v2` → `MY_SERVER_V2`: the suffix of the per-server environment variables. */
export function serverEnvSuffix(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, "_");
}

/** The variable holding the API key the gateway sends to server `name`. */
export function apiKeyVariable(name: string): string {
  return `SVC_UPSTREAM_API_KEY_${serverEnvSuffix(name)}`;
}

/** The variable naming the header that carries it (default: Authorization: Bearer). */
export function apiKeyHeaderVariable(name: string): string {
  return `SVC_UPSTREAM_KEY_HEADER_${serverEnvSuffix(name)}`;
}
