// The one interface behind which the gateway keeps state shared across replicas: rate-limit counters,
// replay keys, sessions, upstream tokens. In-memory for a single process, Redis in production.

/** Circuit breaker in front of Redis. The memory store is always `closed`. */
export type BreakerState = "closed" | "open" | "half_open";

export interface KvStoreStatus {
  kind: "memory" | "redis";
  /** False while the backend cannot be reached (breaker open, or not yet connected). */
  healthy: boolean;
  breaker: BreakerState;
  /** Last backend error, for health output and logs. Never contains the Redis password. */
  lastError?: string;
}

/** What a script may return: Redis turns Lua integers, strings, nil and tables into these. */
export type KvScriptValue = number | string | null | KvScriptValue[];

/**
 * The synchronous view of the memory store a script's in-process twin works on. Synchronous on purpose:
 * JavaScript runs it to the end without yielding, which makes it as atomic as Lua on Redis.
 */
export interface KvScriptContext {
  get(key: string): string | null;
  set(key: string, value: string, ttlMs?: number): void;
  delete(key: string): void;
  /** Milliseconds left to live, -1 when the key has no expiry, -2 when it does not exist (like PTTL). */
  pttl(key: string): number;
}

/**
 * One atomic step written twice: `lua` runs on Redis with EVALSHA/EVAL (KEYS and ARGV as usual), `memory` is
 * its in-process equivalent. Both must return the same value for the same state, so callers (e.g. the rate
 * limiter) never know which store they talk to. Pass the current time in `args` rather than reading a clock
 * inside the script, so both variants agree on it.
 */
export interface KvScript<T extends KvScriptValue = KvScriptValue> {
  lua: string;
  memory: (store: KvScriptContext, keys: string[], args: string[]) => T;
}

export interface KvStore {
  get(key: string): Promise<string | null>;
  /** ttlMs omitted: the key never expires. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Stores only when absent; true when stored. Atomic (replay protection uses it). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Runs a Lua script atomically on Redis; the memory store runs the given in-process equivalent. */
  eval<T extends KvScriptValue>(script: KvScript<T>, keys: string[], args: string[]): Promise<T>;
  status(): KvStoreStatus;
  /** Resolves once connected (memory: at once). Readiness waits on it. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** Every call on a store that cannot reach its backend rejects with this, quickly, instead of hanging. */
export class KvUnavailableError extends Error {
  override readonly name = "KvUnavailableError";
  readonly breaker: BreakerState;

  constructor(message: string, breaker: BreakerState, options?: { cause?: unknown }) {
    super(message, options);
    this.breaker = breaker;
  }
}
