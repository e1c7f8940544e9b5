// The upstream tokens the gateway holds: one per (user, server) for users, one per server for machines, sealed in
// the KV store (AES-256-GCM under SVC_OAUTH_KV_KEY, the record's key as additional data). The key names an HMAC of
// server and owner, and the owner is principalKey(user): a record sealed for user A does not even open under user
// B's key, so A's token cannot be served to B by any mix-up of keys.
import type { SealedStore } from "../oauth/sealed-store.ts";

/** The owner of a server-wide token obtained with client_credentials. */
export const MACHINE_OWNER = "machine";

export interface UpstreamToken {
  access_token: string;
  refresh_token?: string;
  /** Milliseconds since the epoch; undefined when the authorization server said nothing (used until refused). */
  expires_at?: number;
  /** The scopes granted, as the token response said (or as requested when it said nothing). */
  scope: string;
  /** The authorization server and the client that obtained it: a refresh must go to the same ones. */
  issuer: string;
  client_id: string;
  /** When the user connected (consented); kept across refreshes. */
  connected_at: number;
  refreshed_at?: number;
}

/** A token with a refresh token is kept this long after its last refresh (the grant may live on at the vendor). */
const WITH_REFRESH_TTL_SECONDS = 30 * 24 * 3600;
/** Without one, a little past its expiry; one that states no expiry, a day. */
const NO_EXPIRY_TTL_SECONDS = 24 * 3600;

export class UpstreamTokens {
  readonly #store: SealedStore;
  readonly #now: () => number;

  constructor(store: SealedStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /** Read on every call to an oauth upstream: the store is asked each time, an unchanged record is not decrypted again. */
  get(server: string, owner: string): Promise<UpstreamToken | undefined> {
    return this.#store.getFrequent<UpstreamToken>(this.#keyOf(server, owner));
  }

  async put(server: string, owner: string, token: UpstreamToken): Promise<void> {
    let ttl = NO_EXPIRY_TTL_SECONDS;
    if (token.refresh_token !== undefined) ttl = WITH_REFRESH_TTL_SECONDS;
    else if (token.expires_at !== undefined)
      ttl = Math.max(60, Math.ceil((token.expires_at - this.#now()) / 1000) + 60);
    await this.#store.set(this.#keyOf(server, owner), token, ttl);
  }

  delete(server: string, owner: string): Promise<void> {
    return this.#store.delete(this.#keyOf(server, owner));
  }

  #keyOf(server: string, owner: string): string {
    return this.#store.keyOf("upstream-token", `${server}\u0000${owner}`);
  }
}
