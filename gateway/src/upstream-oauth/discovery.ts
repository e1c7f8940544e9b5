// Where a server's tokens come from, found once and cached: the upstream's protected-resource metadata (RFC 9728),
// from the resource_metadata its 401 challenge names or else the well-known path, then its authorization server's
// metadata (RFC 8414, else OpenID Connect discovery). `auth_server_url` skips the first step for upstreams that
// publish none; `scopes_override` replaces the scopes they advertise. oauth4webapi does the requests and checks
// (issuer and resource identifiers must match what was asked for), through the guarded fetch: the metadata names the
// next URL, so every one of them is checked before the gateway sends anything there.
import * as oauth from "oauth4webapi";
import type { ServerConfig } from "../config/index.ts";
import { type FetchFunction, GuardedRequestError } from "../net/guarded-http.ts";
import { parseBearerChallenge } from "./challenge.ts";
import { describeFailure } from "./failure-text.ts";
import { oauthHttp } from "./http-options.ts";

export interface UpstreamAuthorization {
  as: oauth.AuthorizationServer;
  /** The resource indicator (RFC 8707) sent with every authorization and token request: the upstream's identifier. */
  resource: string;
  /** The scopes to request: scopes_override, else what the upstream advertises, else none. */
  scopes: string[];
}

/** Why a server's authorization server could not be found; the message names the server and the fix. */
export class DiscoveryError extends Error {
  override readonly name = "DiscoveryError";
}

/** How long a discovery result is reused; a failed discovery is retried after FAILURE_TTL_MS. */
export const DISCOVERY_TTL_MS = 10 * 60_000;
const FAILURE_TTL_MS = 30_000;
/** Servers whose discovery is cached at once (oldest dropped first): bounded whatever the config holds. */
const MAX_CACHED = 256;

interface Cached {
  until: number;
  result: Promise<UpstreamAuthorization>;
}

export class UpstreamDiscovery {
  readonly #cache = new Map<string, Cached>();
  readonly #fetch: FetchFunction;
  readonly #now: () => number;

  constructor(fetch: FetchFunction, now: () => number = Date.now) {
    this.#fetch = fetch;
    this.#now = now;
  }

  /** Cached per server and the fields that decide the answer; concurrent callers share one discovery. */
  discover(server: ServerConfig): Promise<UpstreamAuthorization> {
    const key = JSON.stringify([server.name, server.url, server.auth_server_url, server.scopes_override]);
    const now = this.#now();
    const cached = this.#cache.get(key);
    if (cached !== undefined && cached.until > now) return cached.result;
    this.#cache.delete(key);
    while (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value as string);
    const entry: Cached = { until: now + DISCOVERY_TTL_MS, result: discover(server, this.#fetch) };
    entry.result.catch(() => {
      entry.until = this.#now() + FAILURE_TTL_MS;
    });
    this.#cache.set(key, entry);
    return entry.result;
  }
}

async function discover(server: ServerConfig, fetch: FetchFunction): Promise<UpstreamAuthorization> {
  const overrideScopes = server.scopes_override?.split(" ").filter((scope) => scope !== "");
  if (server.auth_server_url !== undefined) {
    const as = await authorizationServer(server, server.auth_server_url, fetch);
    return { as, resource: server.url, scopes: overrideScopes ?? [] };
  }
  const metadata = await resourceMetadata(server, fetch);
  const issuer = metadata.authorization_servers?.[0];
  if (issuer === undefined) {
    throw new DiscoveryError(
      `Upstream server '${server.name}' publishes protected-resource metadata naming no authorization server; set auth_server_url for it`,
    );
  }
  const as = await authorizationServer(server, issuer, fetch);
  return { as, resource: metadata.resource, scopes: overrideScopes ?? metadata.scopes_supported ?? [] };
}

/** RFC 9728: the document the upstream's challenge points at, else the well-known URL derived from its URL. */
async function resourceMetadata(server: ServerConfig, fetch: FetchFunction): Promise<oauth.ResourceServer> {
  const resource = new URL(server.url);
  const fromChallenge = await challengedMetadataUrl(server, fetch);
  try {
    const response =
      fromChallenge === undefined
        ? await oauth.resourceDiscoveryRequest(resource, oauthHttp(fetch))
        : await fetch(fromChallenge, { headers: { accept: "application/json" } });
    return await oauth.processResourceDiscoveryResponse(resource, response);
  } catch (error) {
    throw new DiscoveryError(
      `Upstream server '${server.name}' uses upstream_auth_type oauth but publishes no usable protected-resource metadata (RFC 9728) at ${fromChallenge ?? "its well-known URL"}: ${describeFailure(error)}; set auth_server_url to its authorization server's issuer`,
      { cause: error },
    );
  }
}

/**
 * The resource_metadata of the upstream's challenge to a request without a token (the MCP authorization spec's first
 * choice), or undefined when it sends none. The probe is a bodiless POST: an MCP endpoint authenticates before it
 * reads anything.
 */
async function challengedMetadataUrl(server: ServerConfig, fetch: FetchFunction): Promise<URL | undefined> {
  let response: Response;
  try {
    response = await fetch(server.url, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
    });
    await response.body?.cancel();
  } catch {
    return undefined;
  }
  if (response.status !== 401) return undefined;
  const challenge = await parseBearerChallenge(response.headers.get("www-authenticate") ?? undefined);
  if (challenge.resourceMetadata === undefined) return undefined;
  try {
    const url = new URL(challenge.resourceMetadata);
    // Metadata about this upstream comes from this upstream's origin: a challenge must not send the gateway elsewhere.
    return url.origin === new URL(server.url).origin ? url : undefined;
  } catch {
    return undefined;
  }
}

/** RFC 8414 metadata of `issuer`, else its OpenID Connect discovery document; the issuer in it must be `issuer`. */
async function authorizationServer(
  server: ServerConfig,
  issuer: string,
  fetch: FetchFunction,
): Promise<oauth.AuthorizationServer> {
  const url = new URL(issuer);
  const failures: string[] = [];
  for (const algorithm of ["oauth2", "oidc"] as const) {
    try {
      const response = await oauth.discoveryRequest(url, { algorithm, ...oauthHttp(fetch) });
      return await oauth.processDiscoveryResponse(url, response);
    } catch (error) {
      failures.push(`${algorithm === "oauth2" ? "RFC 8414" : "OpenID Connect"}: ${describeFailure(error)}`);
      // A refused scheme or address is refused for both documents: asking twice says nothing new.
      if (error instanceof GuardedRequestError && (error.reason === "scheme" || error.reason === "address"))
        break;
    }
  }
  throw new DiscoveryError(
    `Upstream server '${server.name}': no authorization-server metadata could be read from ${issuer} (${failures.join("; ")})${server.auth_server_url === undefined ? "" : "; check auth_server_url"}`,
  );
}
