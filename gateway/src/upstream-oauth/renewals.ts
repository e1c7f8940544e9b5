// One renewal of a token at a time (a refresh, or a new client_credentials token). Two renewals of the same token
// race badly: with rotating refresh tokens the second presents a refresh token the first just consumed, and many
// vendors (oidc-provider among them) take that reuse for theft and revoke the whole grant, sending the user back to
// consent. So in this process concurrent callers share one renewal, and across replicas a short KV lock lets one
// replica renew while the others wait for the record it writes.
import { GatewayError } from "../errors/gateway-error.ts";
import type { SealedStore } from "../oauth/sealed-store.ts";
import { OAUTH_REQUEST_TIMEOUT_MS } from "./http-options.ts";
import type { UpstreamToken, UpstreamTokens } from "./upstream-tokens.ts";

/** The lock outlives one renewal (a token request, bounded by OAUTH_REQUEST_TIMEOUT_MS) with room to spare. */
const LOCK_TTL_SECONDS = Math.ceil((OAUTH_REQUEST_TIMEOUT_MS * 2) / 1000);
/** How often a waiting replica looks for the renewed record. */
const POLL_MS = 100;

export class Renewals {
  readonly #store: SealedStore;
  readonly #tokens: UpstreamTokens;
  readonly #inFlight = new Map<string, Promise<UpstreamToken | undefined>>();

  constructor(store: SealedStore, tokens: UpstreamTokens) {
    this.#store = store;
    this.#tokens = tokens;
  }

  /**
   * Runs `renew` for (server, owner) unless a renewal is already under way, whose result is then shared. `stale` is
   * the record being replaced (undefined when there is none): a waiting replica is done once the record differs.
   */
  once(
    server: string,
    owner: string,
    stale: UpstreamToken | undefined,
    renew: () => Promise<UpstreamToken | undefined>,
  ): Promise<UpstreamToken | undefined> {
    const id = `${server}\u0000${owner}`;
    const running = this.#inFlight.get(id);
    if (running !== undefined) return running;
    const renewal = this.#renew(id, server, owner, stale, renew).finally(() => this.#inFlight.delete(id));
    this.#inFlight.set(id, renewal);
    return renewal;
  }

  async #renew(
    id: string,
    server: string,
    owner: string,
    stale: UpstreamToken | undefined,
    renew: () => Promise<UpstreamToken | undefined>,
  ): Promise<UpstreamToken | undefined> {
    const lock = this.#store.keyOf("upstream-renewal", id);
    const deadline = Date.now() + LOCK_TTL_SECONDS * 1000;
    for (;;) {
      if (await this.#store.setIfAbsent(lock, "1", LOCK_TTL_SECONDS)) {
        try {
          return await renew();
        } finally {
          await this.#store.delete(lock);
        }
      }
      // Another replica renews: its result lands in the store, before it lets go of the lock. So the lock is read
      // first and the record second: a record still stale after the lock was seen gone means that renewal failed
      // (read the other way round, a renewal finishing between the two reads would look failed, and its freshly
      // consumed refresh token would be presented again).
      let holderGone = false;
      while (!holderGone) {
        if (Date.now() >= deadline) {
          throw new GatewayError(
            "upstream_oauth_failed",
            `Upstream server '${server}': another gateway replica is still renewing this token; try again`,
            { server },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        holderGone = (await this.#store.raw(lock)) === null;
        const current = await this.#tokens.get(server, owner);
        if (current !== undefined && current.access_token !== stale?.access_token) return current;
      }
      // That renewal failed: take the lock to try once more, or wait for whichever waiting replica took it first.
    }
  }
}
