// What each provider type's group sync implements, and the bounds all of them share.
import type { IdentityProviderConfig } from "../../config/index.ts";

/** At most this many groups per user are kept; the rest are dropped (fewer groups never grant more). */
export const MAX_GROUPS_PER_USER = 1000;
/** At most this many pages are read per list; a provider that keeps paging past it is cut off there. */
export const MAX_PAGES = 20;

/** Who to look up at the provider. */
export interface SyncSubject {
  /** The token's `sub`: the user id for Auth0-style and Descope-style providers. */
  sub: string;
  /** The token's `oid` (Microsoft Entra object id): Graph knows users by it; `sub` there is pairwise per app. */
  oid?: string;
}

export interface GroupSource {
  /** The user's groups at the provider, at most MAX_GROUPS_PER_USER; rejects with a ProviderError. */
  groupsOf(subject: SyncSubject): Promise<string[]>;
}

/** Adds names up to the cap; true when the cap was hit. */
export function addBounded(into: Set<string>, names: readonly string[]): boolean {
  for (const name of names) {
    if (into.size >= MAX_GROUPS_PER_USER) return true;
    if (name !== "") into.add(name);
  }
  return false;
}

/** The provider's management credentials, or undefined when group sync is not configured for it. */
export function hasGroupSyncCredentials(provider: IdentityProviderConfig): boolean {
  const set = (value: string | undefined) => value !== undefined && value !== "";
  if (provider.type === "project_idp") return set(provider.management_key) && set(provider.project_id);
  return set(provider.client_id) && set(provider.client_secret);
}
