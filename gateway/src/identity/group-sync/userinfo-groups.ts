// Groups from the provider's userinfo endpoint (OpenID Connect Core 5.3), for providers whose access tokens carry no
// group claims. Asked with the caller's own access token, so it answers with what the provider shares about that
// user and nothing a management credential could see. One lookup per token: the answer is kept until the token
// expires (at most USERINFO_CACHE_MS), in memory, for at most USERINFO_CACHE_ENTRIES tokens.
import type { IdentityProviderConfig } from "../../config/index.ts";
import { groupsFromClaims, type Principal } from "../principal.ts";
import { VerificationCache } from "../verification-cache.ts";
import { ProviderError, providerJson } from "./provider-http.ts";

const USERINFO_CACHE_ENTRIES = 10_000;
const USERINFO_CACHE_MS = 5 * 60_000;

export class UserinfoGroups {
  readonly #cache = new Map<string, { groups: string[]; until: number }>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The groups in the userinfo answer; rejects with a ProviderError (the caller falls back to the token's). */
  async groupsFor(provider: IdentityProviderConfig, principal: Principal, token: string): Promise<string[]> {
    const key = `${provider.name}\u0000${VerificationCache.keyOf(token)}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined && this.#now() < cached.until) return cached.groups;
    const what = `identity provider ${provider.name}: userinfo`;
    const claims = (await providerJson({
      method: "GET",
      url: provider.userinfo_endpoint as string,
      headers: { authorization: `Bearer ${token}` },
      timeoutMs: provider.timeout * 1000,
      what,
    })) as Record<string, unknown>;
    // OpenID Connect Core 5.3.2: the answer's sub must be the token's, or it is about someone else.
    if (typeof claims !== "object" || claims === null || claims.sub !== principal.sub) {
      throw new ProviderError(`${what}: the answer's "sub" is not the token's`);
    }
    const groups = groupsFromClaims(claims);
    if (this.#cache.size >= USERINFO_CACHE_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.delete(key);
    this.#cache.set(key, {
      groups,
      until: Math.min(principal.expiresAt * 1000, this.#now() + USERINFO_CACHE_MS),
    });
    return groups;
  }
}
