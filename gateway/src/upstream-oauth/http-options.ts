// How the gateway, as an OAuth client, makes its requests to upstreams and their authorization servers: bounded in
// time, and over HTTPS only, except to a loopback address (a vendor on the same host, or a test). oauth4webapi
// refuses plain HTTP unless told; the exception is decided per URL, so metadata an upstream publishes can never
// point the gateway at a plain-HTTP server elsewhere.
import * as oauth from "oauth4webapi";

/** Each request to an upstream's metadata, registration, token or revocation endpoint. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

export function isLoopback(url: string | URL): boolean {
  return LOOPBACK_HOSTS.has(new URL(url).hostname);
}

/** Options for one oauth4webapi request to `url`. */
export function requestOptions(url: string | URL): {
  signal: AbortSignal;
  [oauth.allowInsecureRequests]?: boolean;
} {
  return {
    signal: AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS),
    ...(isLoopback(url) ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}
