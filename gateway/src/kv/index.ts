export type { CreateKvStoreOptions } from "./create-kv-store.ts";
export { checkRedisUrl, createKvStore } from "./create-kv-store.ts";
export type {
  BreakerState,
  KvScript,
  KvScriptContext,
  KvScriptValue,
  KvStore,
  KvStoreStatus,
} from "./kv-store.ts";
export { KvUnavailableError } from "./kv-store.ts";
export type { MemoryKvStoreOptions } from "./memory-kv-store.ts";
export { MemoryKvStore } from "./memory-kv-store.ts";
export type { RedisKvStoreOptions } from "./redis-kv-store.ts";
export { RedisKvStore, redisKvDefaults } from "./redis-kv-store.ts";
