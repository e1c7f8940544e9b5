// The gateway's client identity at each upstream's authorization server: the preregistered client of the config, or
// one registered through Dynamic Client Registration (RFC 7591) and kept, sealed, in the KV store so every replica
// uses the same one. Two registrations per server at most: one for users (authorization_code with the gateway's
// callback) and one for machines (exactly the SPEC's client_credentials request body).
import * as oauth from "oauth4webapi";
import type { ServerConfig } from "../config/index.ts";
import type { FetchFunction } from "../net/guarded-http.ts";
import type { SealedStore } from "../oauth/sealed-store.ts";
import { DiscoveryError } from "./discovery.ts";
import { describeFailure } from "./failure-text.ts";
import { oauthHttp } from "./http-options.ts";

export type ClientKind = "user" | "machine";

// A type, not an interface: oauth4webapi's Client has an index signature, which only a type alias satisfies.
export type UpstreamClient = {
  client_id: string;
  client_secret?: string;
};

/** A registration is kept this long, then made again (vendors expire unused clients; this gateway forgets). */
const REGISTRATION_TTL_SECONDS = 30 * 24 * 3600;

export class ClientRegistrations {
  readonly #store: SealedStore;
  /** The gateway's callback, registered as the user client's only redirect URI. */
  readonly #redirectUri: string;
  readonly #fetch: FetchFunction;

  constructor(store: SealedStore, redirectUri: string, fetch: FetchFunction) {
    this.#store = store;
    this.#redirectUri = redirectUri;
    this.#fetch = fetch;
  }

  get redirectUri(): string {
    return this.#redirectUri;
  }

  async clientFor(
    server: ServerConfig,
    as: oauth.AuthorizationServer,
    kind: ClientKind,
  ): Promise<UpstreamClient> {
    if (server.preregistered_client_id !== undefined) {
      return {
        client_id: server.preregistered_client_id,
        ...(server.preregistered_client_secret === undefined
          ? {}
          : { client_secret: server.preregistered_client_secret }),
      };
    }
    const key = this.#keyOf(server, as, kind);
    const stored = await this.#store.get<UpstreamClient>(key);
    if (stored !== undefined) return stored;
    const registered = await this.#register(server, as, kind);
    // Replicas racing here each register; the first stored wins and the others use it (theirs stay unused).
    if (await this.#store.sealIfAbsent(key, registered, REGISTRATION_TTL_SECONDS)) return registered;
    return (await this.#store.get<UpstreamClient>(key)) ?? registered;
  }

  /** Drops a stored registration the authorization server no longer knows (invalid_client): the next use registers. */
  async forget(server: ServerConfig, as: oauth.AuthorizationServer, kind: ClientKind): Promise<void> {
    if (server.preregistered_client_id === undefined) await this.#store.delete(this.#keyOf(server, as, kind));
  }

  #keyOf(server: ServerConfig, as: oauth.AuthorizationServer, kind: ClientKind): string {
    return this.#store.keyOf("upstream-client", `${server.name}\u0000${as.issuer}\u0000${kind}`);
  }

  async #register(
    server: ServerConfig,
    as: oauth.AuthorizationServer,
    kind: ClientKind,
  ): Promise<UpstreamClient> {
    if (as.registration_endpoint === undefined) {
      throw new DiscoveryError(
        `Upstream server '${server.name}': its authorization server ${as.issuer} offers no Dynamic Client Registration; register the gateway there and set preregistered_client_id and preregistered_client_secret`,
      );
    }
    const metadata =
      kind === "machine"
        ? // The SPEC's registration request, field for field.
          {
            client_name: `svc-gateway (${server.name})`,
            grant_types: ["client_credentials"],
            response_types: [],
            token_endpoint_auth_method: "client_secret_basic",
          }
        : {
            client_name: `svc-gateway (${server.name})`,
            redirect_uris: [this.#redirectUri],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "client_secret_basic",
          };
    try {
      const response = await oauth.dynamicClientRegistrationRequest(as, metadata, oauthHttp(this.#fetch));
      const client = await oauth.processDynamicClientRegistrationResponse(response);
      return {
        client_id: client.client_id,
        ...(typeof client.client_secret === "string" ? { client_secret: client.client_secret } : {}),
      };
    } catch (error) {
      throw new DiscoveryError(
        `Upstream server '${server.name}': Dynamic Client Registration at ${as.registration_endpoint} failed: ${describeFailure(error)}; or set preregistered_client_id`,
        { cause: error },
      );
    }
  }
}

/** How the gateway authenticates at the token endpoint with `client`. */
export function clientAuthOf(client: UpstreamClient): oauth.ClientAuth {
  return client.client_secret === undefined ? oauth.None() : oauth.ClientSecretBasic(client.client_secret);
}
