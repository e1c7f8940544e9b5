import { describe, expect, test } from "vitest";
import { FairShare } from "../../src/proxy/fair-share.ts";

describe("FairShare: an upstream's call connections, handed out user by user", () => {
  test("free connections are taken at once; then calls wait and each freed connection goes to the next user in turn", async () => {
    const share = new FairShare(2);
    const first = share.tryAcquire();
    const second = share.tryAcquire();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(share.tryAcquire()).toBeUndefined();

    // A heavy user queues three calls, then a light user one: the light user is served after one heavy call, not
    // after the heavy user's whole backlog.
    const order: string[] = [];
    const never = new AbortController().signal;
    const waits = [
      ...["heavy-1", "heavy-2", "heavy-3"].map((name) =>
        share.wait("heavy", never).then((release) => {
          order.push(name);
          return release;
        }),
      ),
      share.wait("light", never).then((release) => {
        order.push("light-1");
        return release;
      }),
    ];
    expect(share.waiting).toBe(4);
    first?.();
    second?.();
    const heavyFirst = await waits[0];
    const lightFirst = await waits[3];
    expect(order).toEqual(["heavy-1", "light-1"]);
    heavyFirst?.();
    lightFirst?.();
    await Promise.all(waits);
    expect(order).toEqual(["heavy-1", "light-1", "heavy-2", "heavy-3"]);
  });

  test("a newcomer never jumps the line: with calls waiting, tryAcquire says wait even when a connection is free", async () => {
    const share = new FairShare(1);
    const held = share.tryAcquire();
    const waiting = share.wait("a", new AbortController().signal);
    held?.();
    expect(share.tryAcquire()).toBeUndefined();
    const release = await waiting;
    expect(share.active).toBe(1);
    release();
    release(); // idempotent
    expect(share.active).toBe(0);
    expect(share.tryAcquire()).toBeDefined();
  });

  test("an abandoned wait leaves the line and rejects with the reason; its turn goes to the next", async () => {
    const share = new FairShare(1);
    const held = share.tryAcquire();
    const abandon = new AbortController();
    const gone = share.wait("a", abandon.signal);
    const next = share.wait("b", new AbortController().signal);
    abandon.abort(new Error("client went away"));
    await expect(gone).rejects.toThrow("client went away");
    expect(share.waiting).toBe(1);
    held?.();
    const release = await next;
    expect(share.active).toBe(1);
    release();
  });
});
