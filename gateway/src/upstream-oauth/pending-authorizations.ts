// Authorization requests the gateway prepared for a user and awaits at its callback. Each is named by its `state` (32
// random bytes) and holds what the callback needs and must not take from the browser: whose it is (user and server),
// the PKCE verifier, the client and the redirect URI.
//
// The user is never handed the vendor's URL: they get a connect link on the gateway's own origin, named by a second
// random id, that leads there only after the browser proved to be that user (connect-flow.ts). A vendor URL handed
// out would be a phishing tool: opened by someone else, signed in at the vendor, it would link *their* vendor account
// to the user who asked. So:
// - the link is released exactly once (an atomic take), and only then does the vendor URL leave the gateway, to the
//   browser whose user matched; the release binds the state to that browser (a hash of its browser cookie), and the
//   callback refuses the state from any other browser;
// - the state is taken exactly once at the callback (read-and-delete: a replayed callback finds nothing);
// - both expire after PENDING_TTL_SECONDS.
// One unused link per (user, server): asking again while it is unused hands out the same link, so a client retrying
// in a loop cannot grow the store; a newer one (other scopes, or the first was used) supersedes the older, whose
// request lives on only while its user is at the vendor with it.
import { randomBytes } from "node:crypto";
import type { SealedStore } from "../oauth/sealed-store.ts";

/** How long a user has to open the link, finish at the vendor and come back. */
export const PENDING_TTL_SECONDS = 600;

export interface PendingAuthorization {
  server: string;
  /** principalKey of the user the token will belong to. */
  owner: string;
  /** Subject and provider of that user: the connect link checks the browser's user against them, the audit names them. */
  subject: string;
  provider: string;
  /** The user's `oid` (Entra), when their token had one: Entra's `sub` is pairwise per application, `oid` is not. */
  oid?: string;
  codeVerifier: string;
  clientId: string;
  issuer: string;
  resource: string;
  scope: string;
  created_at: number;
  /** The MCP elicitation this request answers (URL mode), named in notifications/elicitation/complete. */
  elicitationId: string;
  /** The vendor's authorization URL, given to the matching browser only. */
  vendorUrl: string;
  /** Set once the link was released: the hash of the browser cookie of the browser sent to the vendor. */
  browserBinding?: string;
}

interface Outstanding {
  link: string;
  state: string;
  scope: string;
  elicitationId: string;
}

interface Link {
  state: string;
}

export class PendingAuthorizations {
  readonly #store: SealedStore;

  constructor(store: SealedStore) {
    this.#store = store;
  }

  /** The link already handed to this user for this server and these scopes, while it is still unused and valid. */
  async outstanding(
    server: string,
    owner: string,
    scope: string,
  ): Promise<{ link: string; elicitationId: string } | undefined> {
    const found = await this.#store.get<Outstanding>(this.#outstandingKey(server, owner));
    if (found === undefined || found.scope !== scope) return undefined;
    // Still openable? (The user may have opened it a moment ago.)
    if ((await this.#store.raw(this.#linkKey(found.link))) === null) return undefined;
    return { link: found.link, elicitationId: found.elicitationId };
  }

  /** Stores `pending` under `state` and returns the id of its connect link. */
  async add(state: string, pending: PendingAuthorization): Promise<string> {
    const link = randomBytes(32).toString("base64url");
    await this.#store.set(this.#stateKey(state), pending, PENDING_TTL_SECONDS);
    await this.#store.set(this.#linkKey(link), { state } satisfies Link, PENDING_TTL_SECONDS);
    // The previous link of this user for this server, if any, is superseded: only the newest link opens. Its request
    // goes with it unless its link was already used: then the user is at the vendor now, and finishes there.
    const previous = await this.#store.get<Outstanding>(this.#outstandingKey(pending.server, pending.owner));
    if (previous !== undefined && previous.state !== state) {
      const unused = (await this.#store.take<Link>(this.#linkKey(previous.link))) !== undefined;
      if (unused) await this.#store.delete(this.#stateKey(previous.state));
    }
    await this.#store.set(
      this.#outstandingKey(pending.server, pending.owner),
      { link, state, scope: pending.scope, elicitationId: pending.elicitationId } satisfies Outstanding,
      PENDING_TTL_SECONDS,
    );
    return link;
  }

  /** The request behind connect link `link`, without using it up; undefined when unknown, used or expired. */
  async peek(link: string): Promise<PendingAuthorization | undefined> {
    const found = await this.#store.get<Link>(this.#linkKey(link));
    return found === undefined
      ? undefined
      : this.#store.get<PendingAuthorization>(this.#stateKey(found.state));
  }

  /**
   * Uses link `link` up and binds its request to the browser with cookie hash `browserBinding`; the request (with
   * the vendor URL to send that browser to), or undefined when another opening took the link first.
   */
  async release(link: string, browserBinding: string): Promise<PendingAuthorization | undefined> {
    const found = await this.#store.take<Link>(this.#linkKey(link));
    if (found === undefined) return undefined;
    const pending = await this.#store.get<PendingAuthorization>(this.#stateKey(found.state));
    if (pending === undefined) return undefined;
    const bound: PendingAuthorization = { ...pending, browserBinding };
    const left = Math.max(1, Math.ceil(PENDING_TTL_SECONDS - (Date.now() - pending.created_at) / 1000));
    await this.#store.set(this.#stateKey(found.state), bound, left);
    return bound;
  }

  /** Makes link `link` and its request unusable (it was opened by someone it was not made for). */
  async burn(link: string): Promise<PendingAuthorization | undefined> {
    const found = await this.#store.take<Link>(this.#linkKey(link));
    if (found === undefined) return undefined;
    const pending = await this.#store.take<PendingAuthorization>(this.#stateKey(found.state));
    if (pending !== undefined) await this.#store.delete(this.#outstandingKey(pending.server, pending.owner));
    return pending;
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

  #linkKey(link: string): string {
    return this.#store.keyOf("upstream-link", link);
  }

  #outstandingKey(server: string, owner: string): string {
    return this.#store.keyOf("upstream-pending", `${server}\u0000${owner}`);
  }
}
