import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKvStore } from "../../src/kv/create-kv-store.ts";
import type { BreakerState } from "../../src/kv/kv-store.ts";
import { KvUnavailableError } from "../../src/kv/kv-store.ts";
import { MemoryKvStore } from "../../src/kv/memory-kv-store.ts";
import { RedisKvStore } from "../../src/kv/redis-kv-store.ts";
import { RedisServer } from "./redis-server.ts";
import { brokenScript, fixedWindowCounter } from "./scripts.ts";

let redis: RedisServer;
let raw: Redis;
const stores: RedisKvStore[] = [];
/** Short breaker timings so the outage test stays quick; the defaults are documented in docs/kv-store.md. */
const open = (options: Partial<ConstructorParameters<typeof RedisKvStore>[0]> = {}) => {
  const store = new RedisKvStore({ url: redis.url, openMs: 300, commandTimeoutMs: 300, ...options });
  stores.push(store);
  return store;
};

beforeAll(async () => {
  redis = await RedisServer.start();
  raw = new Redis(redis.url);
  // The outage test kills the server under this client too; its reconnect errors are expected.
  raw.on("error", () => {});
});

afterAll(async () => {
  raw?.disconnect();
  await Promise.all(stores.map((store) => store.close()));
  await redis?.kill();
});

describe("RedisKvStore against a real redis-server", () => {
  it("sets, gets, deletes and expires with a TTL", async () => {
    const store = open();
    await store.ready();
    expect(store.status()).toEqual({ kind: "redis", healthy: true, breaker: "closed" });
    await store.set("a", "1");
    expect(await store.get("a")).toBe("1");
    expect(await raw.pttl("a")).toBe(-1);
    await store.delete("a");
    expect(await store.get("a")).toBeNull();

    // The TTL reaches Redis as PX (a long one, so a slow machine cannot let it lapse before we look)...
    await store.set("long", "v", 60_000);
    const pttl = await raw.pttl("long");
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(60_000);
    // ...and a short one does expire.
    await store.set("short", "v", 100);
    await vi.waitFor(async () => expect(await store.get("short")).toBeNull(), {
      timeout: 5000,
      interval: 50,
    });
  });

  it("setIfAbsent stores exactly once across concurrent callers on separate connections", async () => {
    const replicas = [open(), open(), open()];
    await Promise.all(replicas.map((store) => store.ready()));
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => replicas[i % 3]?.setIfAbsent("replay:n1", `r${i}`, 10_000)),
    );
    expect(results.filter((stored) => stored === true)).toHaveLength(1);
    expect(await raw.get("replay:n1")).toBe(`r${results.indexOf(true)}`);
    const ttl = await raw.pttl("replay:n1");
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000);
  });

  it("runs a Lua script atomically and agrees with the memory twin", async () => {
    const store = open();
    await store.ready();
    const memory = new MemoryKvStore();
    try {
      const run = (kv: RedisKvStore | MemoryKvStore) =>
        Promise.all(Array.from({ length: 20 }, () => kv.eval(fixedWindowCounter, ["rl:bob"], ["60000"])));
      const fromRedis = (await run(store)).sort((a, b) => a - b);
      const fromMemory = (await run(memory)).sort((a, b) => a - b);
      expect(fromRedis).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      expect(fromMemory).toEqual(fromRedis);
      // The script survives a SCRIPT FLUSH (EVALSHA falls back to EVAL).
      await raw.script("FLUSH");
      expect(await store.eval(fixedWindowCounter, ["rl:bob"], ["60000"])).toBe(21);
    } finally {
      await memory.close();
    }
  });

  it("passes Redis reply errors to the caller without counting them as an outage", async () => {
    const store = open({ failureThreshold: 1 });
    await store.ready();
    await expect(store.eval(brokenScript, [], [])).rejects.not.toBeInstanceOf(KvUnavailableError);
    expect(store.status().breaker).toBe("closed");
  });

  it("createKvStore picks Redis when REDIS_URL is set, memory otherwise, and names REDIS_URL when it is bad", async () => {
    const fromEnv = await createKvStore({ REDIS_URL: redis.url });
    const memory = await createKvStore({});
    try {
      await fromEnv.ready();
      expect(fromEnv.status().kind).toBe("redis");
      expect(memory.status().kind).toBe("memory");
    } finally {
      await fromEnv.close();
      await memory.close();
    }
    await expect(createKvStore({ REDIS_URL: "http://localhost:6379" })).rejects.toThrow(
      /REDIS_URL must start with redis/,
    );
    await expect(createKvStore({ REDIS_URL: "redis://user:s3cret@host/abc" })).rejects.toThrow(
      /REDIS_URL database/,
    );
    let message = "";
    try {
      await createKvStore({ REDIS_URL: "redis://user:s3cret@ho st" });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/REDIS_URL/);
    expect(message).not.toContain("s3cret");
  });

  it("times a hung Redis out instead of hanging", async () => {
    const store = open({ failureThreshold: 100 });
    await store.ready();
    redis.pause();
    try {
      const error = await store.get("a").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KvUnavailableError);
      expect((error as Error).message).toMatch(/timed out/i);
    } finally {
      redis.resume();
    }
    await vi.waitFor(async () => expect(await store.get("a")).toBeNull(), { timeout: 3000, interval: 50 });
  });

  // Last: it kills and restarts the server the other tests share.
  it("opens the breaker when Redis dies, fails fast while open, and closes again when Redis is back", async () => {
    const transitions: BreakerState[] = [];
    const store = open({ onBreakerChange: (state) => transitions.push(state) });
    await store.ready();
    await store.set("survivor", "no");

    await redis.kill();
    // Nobody calls the store: the dropped connection and refused reconnects alone open the breaker.
    await vi.waitFor(() => expect(store.status().breaker).toBe("open"), { timeout: 5000, interval: 20 });
    const down = store.status();
    expect(down.healthy).toBe(false);
    expect(down.lastError).toBeTruthy();

    // While open, calls never reach the network: they reject with the breaker's state.
    const results = await Promise.allSettled([
      store.get("x"),
      store.set("x", "1"),
      store.setIfAbsent("x", "1", 1000),
    ]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const reason = (result as PromiseRejectedResult).reason as KvUnavailableError;
      expect(reason).toBeInstanceOf(KvUnavailableError);
      expect(["open", "half_open"]).toContain(reason.breaker);
    }

    await redis.restart();
    await vi.waitFor(() => expect(store.status()).toMatchObject({ breaker: "closed", healthy: true }), {
      timeout: 5000,
      interval: 20,
    });
    const recovered = transitions.slice(transitions.lastIndexOf("open"));
    expect(recovered).toEqual(["open", "half_open", "closed"]);
    expect(store.status().lastError).toBeUndefined();
    // A fresh server (no persistence): the old key is gone, new writes work.
    expect(await store.get("survivor")).toBeNull();
    await store.set("after", "yes");
    expect(await store.get("after")).toBe("yes");
  });
});
