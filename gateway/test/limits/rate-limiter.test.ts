import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MemoryKvStore } from "../../src/kv/index.ts";
import type { KvStore } from "../../src/kv/kv-store.ts";
import { RedisKvStore } from "../../src/kv/redis-kv-store.ts";
import { RateLimiter, type RateLimitResult, rateLimitHeaders } from "../../src/limits/rate-limiter.ts";
import { msUntilRoom } from "../../src/limits/sliding-window.ts";
import { RedisServer } from "../kv/redis-server.ts";

const SETTINGS = { limit: 3, windowSeconds: 10 };
const WINDOW_START = 1_800_000_000_000; // a multiple of 10 s

let redis: RedisServer;
const stores: KvStore[] = [];

async function redisStore(): Promise<KvStore> {
  const store = new RedisKvStore({ url: redis.url });
  await store.ready();
  stores.push(store);
  return store;
}

beforeAll(async () => {
  redis = await RedisServer.start();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis.kill();
});

/** Runs the same timeline of requests against a store and returns the outcomes. */
async function timeline(store: KvStore, user: string, at: number[]): Promise<RateLimitResult[]> {
  let clock = 0;
  const limiter = new RateLimiter(store, () => clock);
  const results: RateLimitResult[] = [];
  for (const time of at) {
    clock = time;
    results.push(await limiter.check({ idp: "idp", sub: user }, SETTINGS));
  }
  return results;
}

const outcomes = (results: RateLimitResult[]) => results.map((r) => r.outcome);

describe("sliding window", () => {
  // Three requests fill the window; in the next window the previous count weighs by its remaining overlap.
  const at = [
    WINDOW_START + 1000,
    WINDOW_START + 2000,
    WINDOW_START + 3000,
    WINDOW_START + 4000, // 4th in the window: refused
    WINDOW_START + 10_000, // next window, previous weighs 100%: 3 + 1 > 3, refused
    WINDOW_START + 15_000, // previous weighs 50%: 1.5 + 0 + 1 <= 3, admitted
    WINDOW_START + 15_500, // 1.35 + 1 + 1 = 3.35 > 3, refused
    WINDOW_START + 19_999, // 0.0003 + 1 + 1 <= 3, admitted
  ];
  const expected = [
    "admitted",
    "admitted",
    "admitted",
    "refused",
    "refused",
    "admitted",
    "refused",
    "admitted",
  ];

  test("in memory", async () => {
    expect(outcomes(await timeline(new MemoryKvStore(), "alice", at))).toEqual(expected);
  });

  test("in Redis, through the Lua script: the same answers", async () => {
    expect(outcomes(await timeline(await redisStore(), "alice-redis", at))).toEqual(expected);
  });

  test("users are independent, and so are providers", async () => {
    const store = new MemoryKvStore();
    const limiter = new RateLimiter(store, () => WINDOW_START);
    for (let i = 0; i < 3; i++) await limiter.check({ idp: "idp", sub: "bob" }, SETTINGS);
    expect((await limiter.check({ idp: "idp", sub: "bob" }, SETTINGS)).outcome).toBe("refused");
    expect((await limiter.check({ idp: "idp", sub: "carol" }, SETTINGS)).outcome).toBe("admitted");
    expect((await limiter.check({ idp: "other-idp", sub: "bob" }, SETTINGS)).outcome).toBe("admitted");
  });

  test("a scoped limit (an organization's per-server limit) counts apart from the global one", async () => {
    const limiter = new RateLimiter(new MemoryKvStore(), () => WINDOW_START);
    const server = { ...SETTINGS, limit: 1, scope: "server/search" };
    expect((await limiter.check({ idp: "idp", sub: "dora" }, server)).outcome).toBe("admitted");
    expect((await limiter.check({ idp: "idp", sub: "dora" }, server)).outcome).toBe("refused");
    for (let i = 0; i < 3; i++)
      expect((await limiter.check({ idp: "idp", sub: "dora" }, SETTINGS)).outcome).toBe("admitted");
  });
});

describe("shared across gateway instances", () => {
  test("two limiters on separate Redis connections share one count", async () => {
    const [a, b] = [new RateLimiter(await redisStore()), new RateLimiter(await redisStore())];
    const results = [];
    for (let i = 0; i < 3; i++)
      results.push(
        (
          await (i % 2 === 0 ? a : b).check(
            { idp: "idp", sub: "shared-user" },
            { limit: 3, windowSeconds: 60 },
          )
        ).outcome,
      );
    results.push(
      (await b.check({ idp: "idp", sub: "shared-user" }, { limit: 3, windowSeconds: 60 })).outcome,
    );
    expect(results).toEqual(["admitted", "admitted", "admitted", "refused"]);
  });

  test("Redis never holds the user's identifier", async () => {
    const store = await redisStore();
    await new RateLimiter(store).check({ idp: "idp", sub: "dana@example.com" }, SETTINGS);
    const { Redis } = await import("ioredis");
    const client = new Redis(redis.url);
    const keys = await client.keys("*");
    await client.quit();
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(" ")).not.toContain("dana");
  });
});

describe("when the store is down", () => {
  test("requests are let through as unchecked (fail open), never refused or hung", async () => {
    const own = await RedisServer.start();
    const store = new RedisKvStore({ url: own.url });
    await store.ready();
    await own.kill();
    const result = await new RateLimiter(store).check({ idp: "idp", sub: "erin" }, SETTINGS);
    await store.close();
    expect(result.outcome).toBe("unchecked");
  });
});

describe("headers", () => {
  test("admitted: policy and remaining quota", async () => {
    const [result] = await timeline(new MemoryKvStore(), "f", [WINDOW_START + 4000]);
    expect(rateLimitHeaders(SETTINGS, result as RateLimitResult)).toEqual({
      "ratelimit-policy": '"per-user";q=3;w=10',
      ratelimit: '"per-user";r=2;t=6',
    });
  });

  test("refused: Retry-After says when one more request fits", async () => {
    const results = await timeline(
      new MemoryKvStore(),
      "g",
      [1, 2, 3, 4].map((s) => WINDOW_START + s * 1000),
    );
    const refused = results[3] as RateLimitResult;
    expect(refused.outcome).toBe("refused");
    // Current window full (3): wait for the next window (6 s) and for the 3 to weigh at most 2 (1/3 of 10 s).
    expect(rateLimitHeaders(SETTINGS, refused)).toMatchObject({
      "retry-after": "10",
      ratelimit: '"per-user";r=0;t=6',
    });
  });

  test("msUntilRoom agrees with the window arithmetic", () => {
    // limit 3, 1 in this window, 4 in the previous: room for one more once 4 × weight + 1 + 1 <= 3, i.e. the
    // previous window weighs 1/4, 7.5 s into this one: 2.5 s after 5 s.
    expect(msUntilRoom(3, 1, 4, 10_000, 5_000)).toBe(2_500);
    expect(msUntilRoom(3, 1, 0, 10_000, 5_000)).toBe(0);
  });
});
