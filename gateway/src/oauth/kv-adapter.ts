// oidc-provider's storage adapter on the gateway's KV store, so every replica sees the same clients, codes, grants,
// sessions and refresh tokens. Records are sealed (sealed-store.ts). Consumption (a code or refresh token used) is a
// separate key set with set-if-absent, because the sealed record cannot be changed atomically in place; the
// provider reads it back as `consumed`, which is what makes a reused code or a reused rotated refresh token visible.
import type { Adapter, AdapterPayload } from "oidc-provider";
import type { SealedStore } from "./sealed-store.ts";

/** Models whose records belong to a grant and go when the grant is revoked. */
const GRANTABLE = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "ClientCredentials",
  "BackchannelAuthenticationRequest",
]);

/** Lifetime of a record the provider stores without one, when nothing else says: a year. */
const UNBOUNDED_TTL_SECONDS = 365 * 24 * 3600;

export interface KvAdapterOptions {
  /** How long a registered client is kept until it is first used (the server extends it on use). */
  clientTtlSeconds: number;
}

export function kvAdapterFactory(store: SealedStore, options: KvAdapterOptions): (model: string) => Adapter {
  return (model) =>
    new KvAdapter(model, store, model === "Client" ? options.clientTtlSeconds : UNBOUNDED_TTL_SECONDS);
}

class KvAdapter implements Adapter {
  readonly #model: string;
  readonly #store: SealedStore;
  /** The lifetime of a record stored without one (the provider gives registered clients none). */
  readonly #defaultTtl: number;

  constructor(model: string, store: SealedStore, defaultTtl: number) {
    this.#model = model;
    this.#store = store;
    this.#defaultTtl = defaultTtl;
  }

  #key(id: string): string {
    return this.#store.keyOf(this.#model, id);
  }

  #consumedKey(id: string): string {
    return this.#store.keyOf(`${this.#model}:consumed`, id);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const ttl = typeof expiresIn === "number" && expiresIn > 0 ? expiresIn : this.#defaultTtl;
    await this.#store.set(this.#key(id), payload, ttl);
    if (this.#model === "Session" && payload.uid !== undefined) {
      await this.#store.set(this.#store.keyOf("SessionUid", payload.uid), id, ttl);
    }
    if (GRANTABLE.has(this.#model) && payload.grantId !== undefined) {
      // The member is named by its KV key (an HMAC of the id): an opaque token's id is the token itself.
      await this.#store.append(this.#store.keyOf("Grant:members", payload.grantId), this.#key(id), ttl);
    }
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const payload = await this.#store.get<AdapterPayload>(this.#key(id));
    if (payload === undefined) return undefined;
    const consumed = await this.#store.raw(this.#consumedKey(id));
    return consumed === null ? payload : { ...payload, consumed: Number(consumed) };
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = await this.#store.get<string>(this.#store.keyOf("SessionUid", uid));
    return id === undefined ? undefined : this.find(id);
  }

  async findByUserCode(): Promise<undefined> {
    // The device flow is not enabled, so no record has a user code.
    return undefined;
  }

  async consume(id: string): Promise<void> {
    const now = Math.floor(Date.now() / 1000);
    // As long as the record itself, so reuse stays detectable while the record could be presented at all.
    const payload = await this.#store.get<AdapterPayload>(this.#key(id));
    const left = typeof payload?.exp === "number" ? payload.exp - now : UNBOUNDED_TTL_SECONDS;
    await this.#store.setIfAbsent(this.#consumedKey(id), String(now), Math.max(1, left));
  }

  async destroy(id: string): Promise<void> {
    await this.#store.delete(this.#key(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    const membersKey = this.#store.keyOf("Grant:members", grantId);
    const members = await this.#store.list(membersKey);
    // Every model's adapter is asked in turn; each removes only its own members (their keys carry the model).
    const own = this.#store.keyOf(this.#model, "").replace(/[^:]*$/, "");
    for (const member of members) {
      if (member.startsWith(own)) await this.#store.delete(member);
    }
  }
}
