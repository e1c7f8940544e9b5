import { afterEach, describe, expect, it } from "vitest";
import { KvUnavailableError } from "../../src/kv/kv-store.ts";
import { MemoryKvStore } from "../../src/kv/memory-kv-store.ts";
import { fixedWindowCounter } from "./scripts.ts";

describe("MemoryKvStore", () => {
  let now = 1_000_000;
  const stores: MemoryKvStore[] = [];
  const make = (options: { maxEntries?: number } = {}) => {
    const store = new MemoryKvStore({ now: () => now, ...options });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it("sets, gets and deletes", async () => {
    const store = make();
    expect(await store.get("a")).toBeNull();
    await store.set("a", "1");
    expect(await store.get("a")).toBe("1");
    await store.set("a", "2");
    expect(await store.get("a")).toBe("2");
    await store.delete("a");
    expect(await store.get("a")).toBeNull();
  });

  it("expires keys after their TTL and never before", async () => {
    const store = make();
    await store.set("k", "v", 1000);
    now += 999;
    expect(await store.get("k")).toBe("v");
    now += 1;
    expect(await store.get("k")).toBeNull();
  });

  it("sweeps expired keys nobody reads again, so memory stays bounded", async () => {
    const store = make();
    for (let i = 0; i < 100; i++) await store.set(`nonce:${i}`, "1", 500);
    await store.set("keep", "1");
    expect(store.size).toBe(101);
    now += 500;
    store.sweep();
    expect(store.size).toBe(1);
    expect(await store.get("keep")).toBe("1");
  });

  it("drops the oldest writes beyond maxEntries", async () => {
    const store = make({ maxEntries: 3 });
    for (const key of ["a", "b", "c", "d"]) await store.set(key, key);
    expect(store.size).toBe(3);
    expect(await store.get("a")).toBeNull();
    expect(await store.get("d")).toBe("d");
  });

  it("setIfAbsent stores exactly once under concurrency, and again after expiry", async () => {
    const store = make();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.setIfAbsent("nonce", String(i), 1000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get("nonce")).toBe(String(results.indexOf(true)));
    now += 1000;
    expect(await store.setIfAbsent("nonce", "later", 1000)).toBe(true);
  });

  it("runs a script's in-process twin atomically", async () => {
    const store = make();
    const calls = await Promise.all(
      Array.from({ length: 10 }, () => store.eval(fixedWindowCounter, ["rl:alice"], ["60000"])),
    );
    expect(calls.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    now += 60_000;
    expect(await store.eval(fixedWindowCounter, ["rl:alice"], ["60000"])).toBe(1);
  });

  it("rejects bad TTLs naming ttlMs", async () => {
    const store = make();
    await expect(store.set("k", "v", 0)).rejects.toThrow(/ttlMs/);
    await expect(store.setIfAbsent("k", "v", 1.5)).rejects.toThrow(/ttlMs/);
  });

  it("reports itself healthy and rejects with KvUnavailableError once closed", async () => {
    const store = make();
    await store.ready();
    expect(store.status()).toEqual({ kind: "memory", healthy: true, breaker: "closed" });
    await store.close();
    expect(store.status().healthy).toBe(false);
    await expect(store.get("k")).rejects.toBeInstanceOf(KvUnavailableError);
  });
});
