// Authorization requests the gateway sent a user to and awaits at its callback. Each is named by its `state` (32
// random bytes) and holds what the callback needs and must not take from the browser: whose it is (user and server),
// the PKCE verifier, the client and the redirect URI. It is taken exactly once (an atomic read-and-delete: a replayed
// callback finds nothing), and expires after PENDING_TTL_SECONDS. One pending request per (user, server): asking
// again hands out the same URL, so a client retrying in a loop cannot grow the store.
import type { SealedStore } from "../oauth/sealed-store.ts";

/** How long a user has to finish at the vendor and come back. */
export const PENDING_TTL_SECONDS = 600;

export interface PendingAuthorization {
  server: string;
  /** principalKey of the user the token will belong to. */
  owner: string;
  /** Subject and provider, for the audit record of the connection. */
  subject: string;
  provider: string;
  codeVerifier: string;
  clientId: string;
  issuer: string;
  resource: string;
  scope: string;
  created_at: number;
}

interface Outstanding {
  state: string;
  url: string;
  scope: string;
}

export class PendingAuthorizations {
  readonly #store: SealedStore;

  constructor(store: SealedStore) {
    this.#store = store;
  }

  /** The URL already handed to this user for this server and these scopes, while it is still valid. */
  async outstanding(server: string, owner: string, scope: string): Promise<string | undefined> {
    const found = await this.#store.get<Outstanding>(this.#outstandingKey(server, owner));
    if (found === undefined || found.scope !== scope) return undefined;
    // Still takeable? (The callback may have consumed it a moment ago.)
    return (await this.#store.raw(this.#stateKey(found.state))) === null ? undefined : found.url;
  }

  async add(state: string, url: string, pending: PendingAuthorization): Promise<void> {
    await this.#store.set(this.#stateKey(state), pending, PENDING_TTL_SECONDS);
    // The previous request of this user for this server, if any, is superseded: only the newest URL works.
    const previous = await this.#store.get<Outstanding>(this.#outstandingKey(pending.server, pending.owner));
    if (previous !== undefined && previous.state !== state)
      await this.#store.delete(this.#stateKey(previous.state));
    await this.#store.set(
      this.#outstandingKey(pending.server, pending.owner),
      { state, url, scope: pending.scope } satisfies Outstanding,
      PENDING_TTL_SECONDS,
    );
  }

  /** The request named by `state`, removed so no second callback can use it; undefined when unknown or used. */
  async take(state: string): Promise<PendingAuthorization | undefined> {
    const pending = await this.#store.take<PendingAuthorization>(this.#stateKey(state));
    if (pending !== undefined) await this.#store.delete(this.#outstandingKey(pending.server, pending.owner));
    return pending;
  }

  #stateKey(state: string): string {
    return this.#store.keyOf("upstream-state", state);
  }

  #outstandingKey(server: string, owner: string): string {
    return this.#store.keyOf("upstream-pending", `${server}\u0000${owner}`);
  }
}
