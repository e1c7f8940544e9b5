// How the gateway, as an OAuth client, makes its requests to upstreams and their authorization servers: through the
// guarded fetch (net/guarded-http.ts), which decides scheme, addresses, redirects and bounds for every URL, whether
// the config or a vendor's metadata named it. oauth4webapi's own https-only check is switched off for that reason:
// the guard allows plain http exactly for the origins the operator configured (and in development), and refuses it
// elsewhere, which one library-wide switch could not express.
import * as oauth from "oauth4webapi";
import type { FetchFunction } from "../net/guarded-http.ts";

/** Each request to an upstream's metadata, registration, token or revocation endpoint. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;
/** Metadata, registration and token answers are a few KB; nothing an OAuth client reads needs more. */
export const OAUTH_RESPONSE_MAX_BYTES = 256 * 1024;

export interface OAuthHttpOptions {
  [oauth.customFetch]: FetchFunction;
  [oauth.allowInsecureRequests]: true;
}

/** Options for every oauth4webapi request, made with `fetch`. */
export function oauthHttp(fetch: FetchFunction): OAuthHttpOptions {
  return { [oauth.customFetch]: fetch, [oauth.allowInsecureRequests]: true };
}
