// One renewal of a token at a time, in one process and across replicas (two stores over one real redis-server, as two
// gateway replicas are): a rotated refresh token must never be presented twice.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKvStore } from "../../src/kv/create-kv-store.ts";
import type { KvStore } from "../../src/kv/index.ts";
import { SealedStore } from "../../src/oauth/sealed-store.ts";
import { Renewals } from "../../src/upstream-oauth/renewals.ts";
import { type UpstreamToken, UpstreamTokens } from "../../src/upstream-oauth/upstream-tokens.ts";
import { RedisServer } from "../kv/redis-server.ts";

let redis: RedisServer;
const replicaKvs: KvStore[] = [];
const kvKey = randomBytes(32);

beforeAll(async () => {
  redis = await RedisServer.start();
  for (let i = 0; i < 2; i++) {
    const kv = await createKvStore({ REDIS_URL: redis.url });
    await kv.ready();
    replicaKvs.push(kv);
  }
}, 60_000);

afterAll(async () => {
  for (const kv of replicaKvs) await kv.close();
  await redis?.kill();
});

function replica(index: number) {
  const store = new SealedStore(replicaKvs[index] as KvStore, kvKey);
  const tokens = new UpstreamTokens(store);
  return { tokens, renewals: new Renewals(store, tokens) };
}

function token(access: string): UpstreamToken {
  return {
    access_token: access,
    refresh_token: `r-${access}`,
    scope: "s",
    issuer: "i",
    client_id: "c",
    connected_at: 1,
  };
}

/** A renewal the test finishes when it chooses. */
function gated() {
  let finish: (value: UpstreamToken | undefined) => void = () => {};
  let calls = 0;
  const done = new Promise<UpstreamToken | undefined>((resolve) => {
    finish = resolve;
  });
  return {
    renew: () => {
      calls++;
      return done;
    },
    finish: (value: UpstreamToken | undefined) => finish(value),
    calls: () => calls,
  };
}

describe("renewals", () => {
  it("shares one renewal among concurrent callers of one process", async () => {
    const { renewals } = replica(0);
    const gate = gated();
    const results = Array.from({ length: 5 }, () => renewals.once("acme", "alice", token("old"), gate.renew));
    gate.finish(token("new"));
    const tokens = await Promise.all(results);
    expect(gate.calls()).toBe(1);
    expect(tokens.map((t) => t?.access_token)).toEqual(Array(5).fill("new"));
  });

  it("lets one replica renew while another waits for the record it stores", async () => {
    const first = replica(0);
    const second = replica(1);
    await first.tokens.put("acme", "bob", token("old"));
    const gate = gated();
    const firstRenewal = first.renewals.once("acme", "bob", token("old"), gate.renew);
    await expect.poll(() => gate.calls()).toBe(1); // the first replica holds the lock
    let secondRenewed = 0;
    const waiting = second.renewals.once("acme", "bob", token("old"), async () => {
      secondRenewed++;
      return token("second");
    });
    await first.tokens.put("acme", "bob", token("new"));
    gate.finish(token("new"));
    expect((await firstRenewal)?.access_token).toBe("new");
    expect((await waiting)?.access_token).toBe("new");
    expect(secondRenewed).toBe(0);
  });

  it("renews itself when the other replica's renewal ended without a new record", async () => {
    const first = replica(0);
    const second = replica(1);
    const gate = gated();
    const firstRenewal = first.renewals.once("acme", "carol", token("old"), gate.renew);
    await expect.poll(() => gate.calls()).toBe(1);
    const waiting = second.renewals.once("acme", "carol", token("old"), async () => token("second"));
    gate.finish(undefined);
    expect(await firstRenewal).toBeUndefined();
    expect((await waiting)?.access_token).toBe("second");
  });
});

describe("after a failed renewal", () => {
  it("two waiting replicas renew once between them, and both get that record", async () => {
    const holder = replica(0);
    // Each replica() has its own Renewals (what one process shares); two over one connection are two replicas here.
    const waiters = [replica(1), replica(0)];
    const gate = gated();
    const held = holder.renewals.once("acme", "erin", token("old"), gate.renew);
    await expect.poll(() => gate.calls()).toBe(1);
    let renewedByWaiters = 0;
    const waiting = waiters.map(({ renewals, tokens }) =>
      renewals.once("acme", "erin", token("old"), async () => {
        renewedByWaiters++;
        // A vendor slow enough that the other waiter sees the failed holder's lock gone before this record lands.
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tokens.put("acme", "erin", token("again"));
        return token("again");
      }),
    );
    gate.finish(undefined);
    expect(await held).toBeUndefined();
    const results = await Promise.all(waiting);
    expect(renewedByWaiters).toBe(1);
    expect(results.map((result) => result?.access_token)).toEqual(["again", "again"]);
  });
});
