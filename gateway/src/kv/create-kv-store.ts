// Chooses the store from the environment: REDIS_URL set → Redis behind a circuit breaker; else in-memory. The Redis
// client (ioredis) is imported only when REDIS_URL is set: a single-replica gateway does not carry it in memory.
import type { BreakerState, KvStore } from "./kv-store.ts";
import { MemoryKvStore } from "./memory-kv-store.ts";

export interface CreateKvStoreOptions {
  /** Told about every breaker transition of the Redis store (the gateway logs them). */
  onBreakerChange?: (state: BreakerState, lastError: string | undefined) => void;
}

export async function createKvStore(
  env: Record<string, string | undefined>,
  options: CreateKvStoreOptions = {},
): Promise<KvStore> {
  const url = env.REDIS_URL?.trim();
  if (!url) return new MemoryKvStore();
  checkRedisUrl(url);
  const { RedisKvStore } = await import("./redis-kv-store.ts");
  return new RedisKvStore({ url, ...options });
}

/** Throws an Error naming REDIS_URL, with any password masked, when the URL cannot be a Redis URL. */
export function checkRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(
      `REDIS_URL is not a URL (expected redis://[user:password@]host[:port][/db]): ${redact(url)}`,
    );
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got ${parsed.protocol}//`);
  }
  if (!parsed.hostname) throw new Error("REDIS_URL has no host");
  const db = parsed.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d+$/.test(db)) {
    throw new Error(`REDIS_URL database must be a number (the path after the host), got "/${db}"`);
  }
}

/** Masks the userinfo part, so a password never reaches a log line. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@");
}
