// The embedded default: one process, no Redis. State lives in a Map; expiry is checked on read and expired
// keys are swept on a timer, so keys written once and never read again (replay nonces) do not pile up.
import type { KvScript, KvScriptContext, KvScriptValue, KvStore, KvStoreStatus } from "./kv-store.ts";
import { KvUnavailableError } from "./kv-store.ts";
import { checkTtl } from "./ttl.ts";

interface Entry {
  value: string;
  /** Epoch ms; undefined = never expires. */
  expiresAt: number | undefined;
}

export interface MemoryKvStoreOptions {
  /** How often expired keys are swept. Default 10 s. */
  sweepIntervalMs?: number;
  /**
   * Hard cap on live keys. Beyond it the oldest-written keys are dropped, because a gateway that runs out of
   * memory protects nothing. Default 1,000,000.
   */
  maxEntries?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export class MemoryKvStore implements KvStore {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;
  /** The synchronous view scripts run against; built once. */
  readonly #scriptContext: KvScriptContext;

  constructor(options: MemoryKvStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000_000;
    this.#now = options.now ?? Date.now;
    this.#sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 10_000);
    // Never keep the process alive just to sweep.
    this.#sweeper.unref();
    this.#scriptContext = {
      get: (key) => this.#read(key),
      set: (key, value, ttlMs) => this.#write(key, value, ttlMs),
      delete: (key) => {
        this.#entries.delete(key);
      },
      pttl: (key) => {
        const entry = this.#live(key);
        if (!entry) return -2;
        return entry.expiresAt === undefined ? -1 : entry.expiresAt - this.#now();
      },
    };
  }

  async get(key: string): Promise<string | null> {
    this.#assertOpen();
    return this.#read(key);
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.#assertOpen();
    if (ttlMs !== undefined) checkTtl(ttlMs);
    this.#write(key, value, ttlMs);
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    this.#assertOpen();
    checkTtl(ttlMs);
    // Check and write happen in one synchronous turn: no other call can interleave.
    if (this.#live(key)) return false;
    this.#write(key, value, ttlMs);
    return true;
  }

  async delete(key: string): Promise<void> {
    this.#assertOpen();
    this.#entries.delete(key);
  }

  async eval<T extends KvScriptValue>(script: KvScript<T>, keys: string[], args: string[]): Promise<T> {
    this.#assertOpen();
    return script.memory(this.#scriptContext, keys, args);
  }

  status(): KvStoreStatus {
    return { kind: "memory", healthy: !this.#closed, breaker: "closed" };
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    this.#entries.clear();
  }

  /** Number of keys held, expired or not (for tests and metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /** Drops every expired key. Runs on a timer; public so tests need not wait for it. */
  sweep(): void {
    const now = this.#now();
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.#entries.delete(key);
    }
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #read(key: string): string | null {
    return this.#live(key)?.value ?? null;
  }

  #write(key: string, value: string, ttlMs: number | undefined): void {
    // Delete first so the Map's insertion order stays "oldest write first" for eviction.
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: ttlMs === undefined ? undefined : this.#now() + ttlMs });
    if (this.#entries.size > this.#maxEntries) this.#evict();
  }

  #evict(): void {
    this.sweep();
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries) break;
      this.#entries.delete(key);
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new KvUnavailableError("KV store is closed", "closed");
  }
}
