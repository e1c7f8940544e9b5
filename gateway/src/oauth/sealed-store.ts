// The OAuth server's records at rest: clients (with their secrets), codes, grants, refresh tokens, sessions and
// the users' groups all sit in the shared KV store (Redis in production), so whoever reads Redis must learn
// nothing usable from it. Values are sealed with AES-256-GCM under SVC_OAUTH_KV_KEY, with the record's key as
// additional data so a sealed value moved to another key does not open. Key names carry an HMAC of the id, never
// the id: an opaque token's id is the token itself.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import type { KvScript, KvStore } from "../kv/index.ts";

const PREFIX = "oauth:";
/** Members remembered per grant (its refresh tokens and codes); rotations beyond it drop the oldest, long consumed. */
const MAX_GRANT_MEMBERS = 500;

const appendMember: KvScript<number> = {
  lua: `local v = redis.call('GET', KEYS[1])
local list = {}
if v then list = cjson.decode(v) end
table.insert(list, ARGV[1])
while #list > tonumber(ARGV[3]) do table.remove(list, 1) end
local ttl = tonumber(ARGV[2])
local left = redis.call('PTTL', KEYS[1])
if left > ttl then ttl = left end
redis.call('SET', KEYS[1], cjson.encode(list), 'PX', ttl)
return #list`,
  memory: (store, keys, args) => {
    const key = keys[0] as string;
    const current = store.get(key);
    const list: string[] = current === null ? [] : JSON.parse(current);
    list.push(args[0] as string);
    while (list.length > Number(args[2])) list.shift();
    const ttl = Math.max(Number(args[1]), store.pttl(key));
    store.set(key, JSON.stringify(list), ttl);
    return list.length;
  },
};

/** GET then DEL in one step: the value goes to exactly one reader (single-use records, e.g. an OAuth `state`). */
const takeOnce: KvScript<string | null> = {
  lua: `local v = redis.call('GET', KEYS[1])
if v then redis.call('DEL', KEYS[1]) end
return v`,
  memory: (store, keys) => {
    const key = keys[0] as string;
    const value = store.get(key);
    if (value !== null) store.delete(key);
    return value;
  },
};

/**
 * Key names and opened values remembered per store, at most this many each (oldest dropped first). With OpenSSL 3 an
 * HMAC or AES-GCM context costs tens of microseconds to set up, which a value read on every request (an upstream
 * token) would pay twice per request.
 */
const MEMO_ENTRIES = 4096;

export class SealedStore {
  readonly #kv: KvStore;
  readonly #encryptionKey: Buffer;
  readonly #nameKey: Buffer;
  readonly #names = new Map<string, string>();
  /** `<key>\0<sealed value>` → its plaintext: the same ciphertext under the same key always opens to the same. */
  readonly #opened = new Map<string, string>();

  /** `secret`: the 32-byte SVC_OAUTH_KV_KEY; two subkeys are derived so sealing and naming never share a key. */
  constructor(kv: KvStore, secret: Buffer) {
    this.#kv = kv;
    this.#encryptionKey = Buffer.from(hkdfSync("sha256", secret, "", "svc-oauth-seal", 32));
    this.#nameKey = Buffer.from(hkdfSync("sha256", secret, "", "svc-oauth-name", 32));
  }

  /** The KV key of record `id` of `kind`. */
  keyOf(kind: string, id: string): string {
    const memo = `${kind}\u0000${id}`;
    let name = this.#names.get(memo);
    if (name === undefined) {
      name = `${PREFIX}${kind}:${createHmac("sha256", this.#nameKey).update(id).digest("base64url")}`;
      remember(this.#names, memo, name);
    }
    return name;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const sealed = await this.#kv.get(key);
    if (sealed === null) return undefined;
    return JSON.parse(this.#open(key, sealed)) as T;
  }

  /**
   * Like get, for a record read on every request: the store is still read each time (a change by another replica is
   * seen at once), but a value this process opened before under this key is not decrypted again.
   */
  async getFrequent<T>(key: string): Promise<T | undefined> {
    const sealed = await this.#kv.get(key);
    if (sealed === null) return undefined;
    const memo = `${key}\u0000${sealed}`;
    let plaintext = this.#opened.get(memo);
    if (plaintext === undefined) {
      plaintext = this.#open(key, sealed);
      remember(this.#opened, memo, plaintext);
    }
    return JSON.parse(plaintext) as T;
  }

  async set(key: string, value: unknown, ttlSeconds: number | undefined): Promise<void> {
    const sealed = this.#seal(key, JSON.stringify(value));
    await this.#kv.set(key, sealed, ttlSeconds === undefined ? undefined : ttlSeconds * 1000);
  }

  /** Stores only when absent; true when this call stored it (the one winner of a race). */
  setIfAbsent(key: string, value: string, ttlSeconds: number): Promise<boolean> {
    return this.#kv.setIfAbsent(key, value, ttlSeconds * 1000);
  }

  /** Seals and stores only when absent; true when this call stored it (the one winner of a race between replicas). */
  sealIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    return this.#kv.setIfAbsent(key, this.#seal(key, JSON.stringify(value)), ttlSeconds * 1000);
  }

  /** Reads and deletes in one atomic step: of several concurrent callers (any replica), one gets the record. */
  async take<T>(key: string): Promise<T | undefined> {
    const sealed = await this.#kv.eval(takeOnce, [key], []);
    if (sealed === null) return undefined;
    return JSON.parse(this.#open(key, sealed)) as T;
  }

  async raw(key: string): Promise<string | null> {
    return this.#kv.get(key);
  }

  delete(key: string): Promise<void> {
    return this.#kv.delete(key);
  }

  /** Adds `member` to the list at `key` atomically (several replicas write the same grant). */
  async append(key: string, member: string, ttlSeconds: number): Promise<void> {
    await this.#kv.eval(appendMember, [key], [member, String(ttlSeconds * 1000), String(MAX_GRANT_MEMBERS)]);
  }

  async list(key: string): Promise<string[]> {
    const value = await this.#kv.get(key);
    return value === null ? [] : (JSON.parse(value) as string[]);
  }

  #seal(key: string, plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#encryptionKey, iv);
    cipher.setAAD(Buffer.from(key));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  #open(key: string, sealed: string): string {
    const bytes = Buffer.from(sealed, "base64");
    const decipher = createDecipheriv("aes-256-gcm", this.#encryptionKey, bytes.subarray(0, 12));
    decipher.setAAD(Buffer.from(key));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString("utf8");
  }
}

function remember(memo: Map<string, string>, key: string, value: string): void {
  if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value as string);
  memo.set(key, value);
}
