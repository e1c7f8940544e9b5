// Redis via ioredis behind a circuit breaker. Nothing here may hang a request: the offline queue is off (a
// call while disconnected fails at once), every command has a timeout, and an open breaker rejects without
// touching the network. ioredis keeps reconnecting in the background; the breaker probes when it is back.
import { createHash } from "node:crypto";
import { Redis, ReplyError } from "ioredis";
import { CircuitBreaker } from "./circuit-breaker.ts";
import { coalesceWritesThisTurn } from "./coalesce-writes.ts";
import type { BreakerState, KvScript, KvScriptValue, KvStore, KvStoreStatus } from "./kv-store.ts";
import { KvUnavailableError } from "./kv-store.ts";
import { checkTtl } from "./ttl.ts";

export interface RedisKvStoreOptions {
  /** redis:// or rediss:// URL (see docs/kv-store.md). */
  url: string;
  /** Consecutive failures that open the breaker. Default 3. */
  failureThreshold?: number;
  /** How long the breaker stays open before a half_open probe. Default 5000 ms. */
  openMs?: number;
  /** Per-command timeout. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** TCP connect timeout. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Longest pause between reconnect attempts. Default 1000 ms. */
  maxReconnectDelayMs?: number;
  /** Told about every breaker transition (the gateway logs them). */
  onBreakerChange?: (state: BreakerState, lastError: string | undefined) => void;
}

export const redisKvDefaults = {
  failureThreshold: 3,
  openMs: 5000,
  commandTimeoutMs: 1000,
  connectTimeoutMs: 2000,
  maxReconnectDelayMs: 1000,
} as const;

export class RedisKvStore implements KvStore {
  readonly #client: Redis;
  readonly #breaker: CircuitBreaker;
  readonly #ready: Promise<void>;
  readonly #scriptShas = new Map<string, string>();
  #closed = false;

  constructor(options: RedisKvStoreOptions) {
    const maxDelay = options.maxReconnectDelayMs ?? redisKvDefaults.maxReconnectDelayMs;
    this.#client = new Redis(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? redisKvDefaults.commandTimeoutMs,
      connectTimeout: options.connectTimeoutMs ?? redisKvDefaults.connectTimeoutMs,
      // Keep trying forever, backing off to maxDelay: Redis coming back must be noticed without a restart.
      retryStrategy: (attempt) => Math.min(attempt * 100, maxDelay),
      lazyConnect: true,
    });
    this.#breaker = new CircuitBreaker({
      failureThreshold: options.failureThreshold ?? redisKvDefaults.failureThreshold,
      openMs: options.openMs ?? redisKvDefaults.openMs,
      probe: async () => {
        await this.#client.ping();
      },
      ...(options.onBreakerChange ? { onChange: options.onBreakerChange } : {}),
    });
    // A refused or dropped connection is a failure even when no call is in flight, so the breaker (and
    // /health) reflect an outage without waiting for traffic. The listener also keeps ioredis from
    // printing "Unhandled error event".
    this.#client.on("error", (error: unknown) => this.#breaker.failure(error));
    this.#client.on("ready", () => this.#breaker.probeNow());
    this.#ready = new Promise((resolve) => this.#client.once("ready", () => resolve()));
    this.#client.connect().catch(() => {
      // Reported through the "error" event; ioredis keeps retrying.
    });
  }

  get(key: string): Promise<string | null> {
    return this.#call(() => this.#client.get(key));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs === undefined) {
      await this.#call(() => this.#client.set(key, value));
      return;
    }
    checkTtl(ttlMs);
    await this.#call(() => this.#client.set(key, value, "PX", ttlMs));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    checkTtl(ttlMs);
    // SET NX is one command: atomic on the server, whatever the number of gateways.
    const reply = await this.#call(() => this.#client.set(key, value, "PX", ttlMs, "NX"));
    return reply === "OK";
  }

  async delete(key: string): Promise<void> {
    await this.#call(() => this.#client.del(key));
  }

  eval<T extends KvScriptValue>(script: KvScript<T>, keys: string[], args: string[]): Promise<T> {
    return this.#call(async () => {
      const sha = this.#sha(script.lua);
      try {
        return (await this.#client.evalsha(sha, keys.length, ...keys, ...args)) as T;
      } catch (error) {
        // First use on this server (or after a restart / SCRIPT FLUSH): send the source once.
        if (error instanceof ReplyError && String((error as Error).message).startsWith("NOSCRIPT")) {
          return (await this.#client.eval(script.lua, keys.length, ...keys, ...args)) as T;
        }
        throw error;
      }
    });
  }

  status(): KvStoreStatus {
    const breaker = this.#breaker.state;
    const lastError = this.#breaker.lastError;
    return {
      kind: "redis",
      healthy: !this.#closed && breaker === "closed" && this.#client.status === "ready",
      breaker,
      ...(lastError === undefined ? {} : { lastError }),
    };
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#breaker.dispose();
    // disconnect(), not quit(): quit waits for a reply that a dead server never sends.
    this.#client.disconnect();
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new KvUnavailableError("KV store is closed", this.#breaker.state);
    if (!this.#breaker.allows()) {
      const state = this.#breaker.state;
      throw new KvUnavailableError(
        `Redis unavailable (circuit breaker ${state})${this.#breaker.lastError ? `: ${this.#breaker.lastError}` : ""}`,
        state,
      );
    }
    coalesceWritesThisTurn(this.#client.stream);
    try {
      const result = await command();
      this.#breaker.success();
      return result;
    } catch (error) {
      // A reply error (wrong type, script error) is Redis answering: a caller bug, not an outage.
      if (error instanceof ReplyError) {
        this.#breaker.success();
        throw error;
      }
      this.#breaker.failure(error);
      throw new KvUnavailableError(`Redis command failed: ${(error as Error).message}`, this.#breaker.state, {
        cause: error,
      });
    }
  }

  #sha(lua: string): string {
    let sha = this.#scriptShas.get(lua);
    if (sha === undefined) {
      sha = createHash("sha1").update(lua).digest("hex");
      this.#scriptShas.set(lua, sha);
    }
    return sha;
  }
}
