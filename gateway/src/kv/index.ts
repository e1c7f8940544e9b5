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
// RedisKvStore is imported from ./redis-kv-store.ts by whoever needs it: re-exported here it would load ioredis
// into every gateway.
export type { RedisKvStoreOptions } from "./redis-kv-store.ts";
