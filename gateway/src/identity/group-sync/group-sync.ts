// Groups from the provider's management API, for providers configured with management credentials. Cached in the
// KV store per (provider, user), so every replica shares one lookup:
//   younger than 80 % of the TTL → the cached groups;
//   80-100 % of the TTL          → the cached groups, and a refresh in the background (busy users never wait);
//   older, or none               → the provider is asked now.
// When the provider cannot answer (down, timeout, 429, an error) the request still goes on, never with more than
// the provider last said: the cached groups if they are younger than `maxStaleMs`, else only the token's own
// groups. A token without group claims, from a provider with a userinfo_endpoint, has the userinfo answer's groups as
// its own (userinfo-groups.ts). Each fallback is counted (metric svc_gateway_group_sync_fallbacks_total) and the provider's state shows in
// /health. After a 429 the provider is not called again before its Retry-After. The token's own groups are always
// kept: the provider signed them.
import { createHash } from "node:crypto";
import type { IdentityProviderConfig } from "../../config/index.ts";
import type { KvStore } from "../../kv/index.ts";
import type { Logger } from "../../log/logger.ts";
import type { Principal } from "../principal.ts";
import { directoryIdpSource } from "./directory-idp.ts";
import { type GroupSource, hasGroupSyncCredentials } from "./group-source.ts";
import { hostedIdpSource } from "./hosted-idp.ts";
import { projectIdpSource } from "./project-idp.ts";
import { ProviderError } from "./provider-http.ts";
import { UserinfoGroups } from "./userinfo-groups.ts";

export const DEFAULT_GROUP_SYNC_TTL_MS = 5 * 60_000;
export const DEFAULT_GROUP_SYNC_MAX_STALE_MS = 60 * 60_000;
/** Share of the TTL after which a cache hit also starts a background refresh. */
const REFRESH_AHEAD = 0.8;

export type FallbackSource = "cache" | "token";

export interface GroupSyncOptions {
  kv: KvStore;
  logger: Logger;
  ttlMs?: number;
  maxStaleMs?: number;
  now?: () => number;
  /** Each request served with fallback groups (metric). */
  onFallback?: (provider: string, source: FallbackSource) => void;
}

/** One provider's sync state for /health. */
export interface GroupSyncStatus {
  /** ok: the last lookup answered; failing: it did not; rate_limited: waiting out a 429's Retry-After. */
  state: "ok" | "failing" | "rate_limited";
  fallbacks: number;
  lastError?: string;
}

interface CachedGroups {
  groups: string[];
  fetchedAt: number;
}

export class GroupSync {
  readonly #kv: KvStore;
  readonly #logger: Logger;
  readonly #ttlMs: number;
  readonly #maxStaleMs: number;
  readonly #now: () => number;
  readonly #onFallback: GroupSyncOptions["onFallback"];
  /** Per provider name: the source built for its current settings (rebuilt when a reload changes them). */
  readonly #sources = new Map<string, { fingerprint: string; source: GroupSource }>();
  readonly #status = new Map<string, GroupSyncStatus>();
  readonly #retryAt = new Map<string, number>();
  /** Lookups in flight, so concurrent requests of one user cause one provider call (bounded by concurrency). */
  readonly #inFlight = new Map<string, Promise<string[]>>();
  readonly #userinfo: UserinfoGroups;

  constructor(options: GroupSyncOptions) {
    this.#kv = options.kv;
    this.#logger = options.logger;
    this.#ttlMs = options.ttlMs ?? DEFAULT_GROUP_SYNC_TTL_MS;
    this.#maxStaleMs = Math.max(options.maxStaleMs ?? DEFAULT_GROUP_SYNC_MAX_STALE_MS, this.#ttlMs);
    this.#now = options.now ?? Date.now;
    this.#onFallback = options.onFallback;
    this.#userinfo = new UserinfoGroups(this.#now);
  }

  /**
   * The caller's groups: the token's (or, when it carries none and the provider has a userinfo_endpoint, the
   * userinfo answer's), plus the provider's when group sync is configured for `provider`. `token` is the caller's
   * access token, for userinfo; a DPoP-bound token is not sent there (the gateway cannot sign its proof).
   */
  async groupsFor(provider: IdentityProviderConfig, principal: Principal, token?: string): Promise<string[]> {
    let tokenGroups = principal.groups;
    const askUserinfo =
      token !== undefined &&
      provider.userinfo_endpoint !== undefined &&
      tokenGroups.length === 0 &&
      principal.dpopJkt === undefined;
    if (askUserinfo) {
      try {
        tokenGroups = await this.#userinfo.groupsFor(provider, principal, token);
        this.#succeeded(provider.name);
      } catch (error) {
        this.#failed(provider.name, error);
        this.#statusOf(provider.name).fallbacks++;
        this.#onFallback?.(provider.name, "token");
      }
    }
    if (!hasGroupSyncCredentials(provider)) return tokenGroups;
    const source = this.#sourceFor(provider);
    const subject =
      principal.oid === undefined ? { sub: principal.sub } : { sub: principal.sub, oid: principal.oid };
    const key = `groups:${provider.name}:${createHash("sha256")
      .update(`${subject.sub}\u0000${subject.oid ?? ""}`)
      .digest("base64url")}`;
    const cached = await this.#read(key);
    const age = cached === undefined ? Number.POSITIVE_INFINITY : this.#now() - cached.fetchedAt;
    if (cached !== undefined && age < this.#ttlMs) {
      if (age >= this.#ttlMs * REFRESH_AHEAD)
        void this.#lookup(provider.name, key, source, subject).catch(() => {});
      return union(tokenGroups, cached.groups);
    }
    try {
      return union(tokenGroups, await this.#lookup(provider.name, key, source, subject));
    } catch {
      const status = this.#statusOf(provider.name);
      status.fallbacks++;
      if (cached !== undefined && age < this.#maxStaleMs) {
        this.#onFallback?.(provider.name, "cache");
        return union(tokenGroups, cached.groups);
      }
      this.#onFallback?.(provider.name, "token");
      return tokenGroups;
    }
  }

  /** Providers with group sync configured that have been used, by name. */
  status(): Record<string, GroupSyncStatus> {
    return Object.fromEntries(this.#status);
  }

  /** True when any provider's last lookup failed: requests are being served with fallback groups. */
  degraded(): boolean {
    return [...this.#status.values()].some((status) => status.state !== "ok");
  }

  #sourceFor(provider: IdentityProviderConfig): GroupSource {
    const fingerprint = JSON.stringify(provider);
    const known = this.#sources.get(provider.name);
    if (known !== undefined && known.fingerprint === fingerprint) return known.source;
    const source =
      provider.type === "hosted_idp"
        ? hostedIdpSource(provider)
        : provider.type === "directory_idp"
          ? directoryIdpSource(provider)
          : projectIdpSource(provider);
    this.#sources.set(provider.name, { fingerprint, source });
    return source;
  }

  #statusOf(name: string): GroupSyncStatus {
    let status = this.#status.get(name);
    if (status === undefined) {
      status = { state: "ok", fallbacks: 0 };
      this.#status.set(name, status);
    }
    return status;
  }

  #failed(name: string, error: unknown): void {
    const status = this.#statusOf(name);
    const message = error instanceof Error ? error.message : String(error);
    const rateLimited = error instanceof ProviderError && error.retryAt !== undefined;
    if (rateLimited) this.#retryAt.set(name, error.retryAt as number);
    const state = rateLimited ? "rate_limited" : "failing";
    // Logged when the state or reason changes, not per request: an outage must not flood the log.
    if (status.state !== state || status.lastError !== message) {
      this.#logger.warn("group sync failed: requests use the cached groups or the token's own groups", {
        provider: name,
        error: message,
      });
    }
    status.state = state;
    status.lastError = message;
  }

  #succeeded(name: string): void {
    const status = this.#statusOf(name);
    if (status.state !== "ok") this.#logger.info("group sync answers again", { provider: name });
    status.state = "ok";
    delete status.lastError;
    this.#retryAt.delete(name);
  }

  async #read(key: string): Promise<CachedGroups | undefined> {
    // The KV store unreachable is like an empty cache: the provider is asked.
    const text = await this.#kv.get(key).catch(() => null);
    if (text === null) return undefined;
    try {
      const parsed = JSON.parse(text) as CachedGroups;
      return Array.isArray(parsed.groups) && typeof parsed.fetchedAt === "number" ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  #lookup(
    name: string,
    key: string,
    source: GroupSource,
    subject: { sub: string; oid?: string },
  ): Promise<string[]> {
    let pending = this.#inFlight.get(key);
    if (pending === undefined) {
      pending = this.#fetch(name, key, source, subject).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, pending);
    }
    return pending;
  }

  async #fetch(
    name: string,
    key: string,
    source: GroupSource,
    subject: { sub: string; oid?: string },
  ): Promise<string[]> {
    const retryAt = this.#retryAt.get(name);
    if (retryAt !== undefined && this.#now() < retryAt) {
      throw new ProviderError(
        `identity provider ${name}: waiting out a 429 until ${new Date(retryAt).toISOString()}`,
        429,
        retryAt,
      );
    }
    let groups: string[];
    try {
      groups = await source.groupsOf(subject);
    } catch (error) {
      this.#failed(name, error);
      throw error;
    }
    this.#succeeded(name);
    const entry: CachedGroups = { groups, fetchedAt: this.#now() };
    await this.#kv.set(key, JSON.stringify(entry), this.#maxStaleMs).catch(() => {});
    return groups;
  }
}

function union(token: readonly string[], synced: readonly string[]): string[] {
  return token.length === 0 ? [...synced] : [...new Set([...token, ...synced])];
}
