// The KV records of upstream OAuth on both stores (in-memory and a real redis-server): a pending authorization is
// taken exactly once, its connect link released exactly once (to one browser), a user's link is reused rather than
// multiplied, and a token sealed for one user never opens as another's.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKvStore } from "../../src/kv/create-kv-store.ts";
import type { KvStore } from "../../src/kv/index.ts";
import { SealedStore } from "../../src/oauth/sealed-store.ts";
import {
  type PendingAuthorization,
  PendingAuthorizations,
} from "../../src/upstream-oauth/pending-authorizations.ts";
import { UpstreamTokens } from "../../src/upstream-oauth/upstream-tokens.ts";
import { RedisServer } from "../kv/redis-server.ts";

let redis: RedisServer;
const stores: Record<string, KvStore> = {};

beforeAll(async () => {
  redis = await RedisServer.start();
  stores.memory = await createKvStore({});
  const redisStore = await createKvStore({ REDIS_URL: redis.url });
  stores.redis = redisStore;
  await redisStore.ready();
}, 60_000);

afterAll(async () => {
  for (const store of Object.values(stores)) await store.close();
  await redis?.kill();
});

function pending(owner: string, scope = "files:read"): PendingAuthorization {
  return {
    server: "acme",
    owner,
    subject: owner,
    provider: "corp",
    codeVerifier: "verifier",
    clientId: "client",
    issuer: "https://auth.acme.example",
    resource: "https://mcp.acme.example/mcp",
    scope,
    created_at: Date.now(),
    elicitationId: `elicitation-${owner}`,
    vendorUrl: "https://auth.acme.example/authorize?state=s",
  };
}

describe.each(["memory", "redis"])("on the %s store", (kind) => {
  const sealed = () => new SealedStore(stores[kind] as KvStore, randomBytes(32));

  it("hands a pending authorization to exactly one of several concurrent callbacks, and never again", async () => {
    const authorizations = new PendingAuthorizations(sealed());
    const alice = pending("alice");
    await authorizations.add("state-1", alice);
    const taken = await Promise.all(Array.from({ length: 8 }, () => authorizations.take("state-1")));
    expect(taken.filter((found) => found !== undefined)).toEqual([alice]);
    expect(await authorizations.take("state-1")).toBeUndefined();
    expect(await authorizations.take("never-issued")).toBeUndefined();
  });

  it("hands out the same link while it is unused, and a new one for other scopes (the old one then stops working)", async () => {
    const authorizations = new PendingAuthorizations(sealed());
    const linkA = await authorizations.add("state-a", pending("bob"));
    expect(await authorizations.outstanding("acme", "bob", "files:read")).toEqual({
      link: linkA,
      elicitationId: "elicitation-bob",
    });
    expect(await authorizations.outstanding("acme", "carol", "files:read")).toBeUndefined();
    expect(await authorizations.outstanding("acme", "bob", "files:write")).toBeUndefined();
    const linkB = await authorizations.add("state-b", pending("bob", "files:write"));
    expect(linkB).not.toBe(linkA);
    expect(await authorizations.peek(linkA)).toBeUndefined();
    expect(await authorizations.take("state-a")).toBeUndefined();
    expect((await authorizations.take("state-b"))?.scope).toBe("files:write");
    // Once used, it is no longer handed out.
    expect(await authorizations.outstanding("acme", "bob", "files:write")).toBeUndefined();
  });

  it("releases a link to exactly one of several concurrent openings, bound to that browser", async () => {
    const authorizations = new PendingAuthorizations(sealed());
    const link = await authorizations.add("state-r", pending("dave"));
    expect((await authorizations.peek(link))?.owner).toBe("dave");
    const released = await Promise.all(
      Array.from({ length: 8 }, (_, index) => authorizations.release(link, `browser-${index}`)),
    );
    const winners = released.filter((found) => found !== undefined);
    expect(winners).toHaveLength(1);
    expect(await authorizations.peek(link)).toBeUndefined();
    expect(await authorizations.outstanding("acme", "dave", "files:read")).toBeUndefined();
    // The callback finds the request with the winner's binding.
    expect((await authorizations.take("state-r"))?.browserBinding).toBe(winners[0]?.browserBinding);
  });

  it("keeps a request whose link was used while a newer link supersedes it, and drops one whose link was not", async () => {
    const authorizations = new PendingAuthorizations(sealed());
    const used = await authorizations.add("state-used", pending("erin"));
    await authorizations.release(used, "browser");
    await authorizations.add("state-next", pending("erin"));
    expect((await authorizations.take("state-used"))?.browserBinding).toBe("browser");
    const unused = await authorizations.add("state-unused", pending("frank"));
    await authorizations.add("state-newer", pending("frank"));
    expect(await authorizations.peek(unused)).toBeUndefined();
    expect(await authorizations.take("state-unused")).toBeUndefined();
  });

  it("burns a link and its request", async () => {
    const authorizations = new PendingAuthorizations(sealed());
    const link = await authorizations.add("state-burn", pending("grace"));
    expect((await authorizations.burn(link))?.owner).toBe("grace");
    expect(await authorizations.release(link, "browser")).toBeUndefined();
    expect(await authorizations.take("state-burn")).toBeUndefined();
  });

  it("keeps each user's token under their own key: a record copied to another user's key does not open", async () => {
    const store = sealed();
    const tokens = new UpstreamTokens(store);
    const token = {
      access_token: "alice-vendor-token",
      scope: "files:read",
      issuer: "https://auth.acme.example",
      client_id: "client",
      connected_at: 1,
    };
    await tokens.put("acme", "alice-key", token);
    expect(await tokens.get("acme", "alice-key")).toEqual(token);
    expect(await tokens.get("acme", "bob-key")).toBeUndefined();
    expect(await tokens.get("other", "alice-key")).toBeUndefined();
    const kv = stores[kind] as KvStore;
    const aliceKey = store.keyOf("upstream-token", "acme\u0000alice-key");
    const bobKey = store.keyOf("upstream-token", "acme\u0000bob-key");
    const raw = (await kv.get(aliceKey)) as string;
    expect(raw).not.toContain("alice-vendor-token");
    await kv.set(bobKey, raw);
    await expect(tokens.get("acme", "bob-key")).rejects.toThrow();
  });
});
