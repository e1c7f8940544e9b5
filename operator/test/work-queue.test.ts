import { describe, expect, it } from "vitest";
import { buildStatus, sameStatus } from "../src/controller/conditions.ts";
import { WorkQueue } from "../src/controller/work-queue.ts";

describe("work queue", () => {
  it("backs off per key exponentially up to the cap, and forgets on success", async () => {
    const queue = new WorkQueue(async () => {}, { baseDelayMs: 100, maxDelayMs: 1000 });
    expect([1, 2, 3, 4, 5, 6].map(() => queue.retry("a"))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(queue.retry("b")).toBe(100);
    queue.forget("a");
    expect(queue.failureCount("a")).toBe(0);
    await queue.stop();
  });

  it("dedupes adds of a waiting key, runs a key added while it runs once more afterwards, never in parallel", async () => {
    const seen: string[] = [];
    let running = 0;
    let overlapped = false;
    const queue = new WorkQueue(
      async (key) => {
        running += 1;
        overlapped ||= running > 1;
        seen.push(key);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
      },
      { baseDelayMs: 10, maxDelayMs: 10 },
    );
    for (const key of ["a", "b", "a", "a", "b"]) queue.add(key);
    await queue.idle();
    // "a" started at once; the later adds queue "b" once and "a" once more.
    expect(seen).toEqual(["a", "b", "a"]);
    expect(overlapped).toBe(false);
    await queue.stop();
  });
});

describe("status conditions", () => {
  it("moves lastTransitionTime only when a condition's status changes", () => {
    const t1 = new Date("2026-01-01T00:00:00Z");
    const t2 = new Date("2026-01-02T00:00:00Z");
    const first = buildStatus(
      undefined,
      1,
      [{ type: "Ready", status: false, reason: "Unavailable", message: "m" }],
      {},
      t1,
    );
    const sameStatusNewMessage = buildStatus(
      first,
      2,
      [{ type: "Ready", status: false, reason: "Unavailable", message: "n" }],
      {},
      t2,
    );
    expect(sameStatusNewMessage.conditions?.[0]?.lastTransitionTime).toBe(t1.toISOString());
    const flipped = buildStatus(
      first,
      2,
      [{ type: "Ready", status: true, reason: "Ready", message: "m" }],
      {},
      t2,
    );
    expect(flipped.conditions?.[0]).toMatchObject({
      status: "True",
      lastTransitionTime: t2.toISOString(),
      observedGeneration: 2,
    });
    expect(
      sameStatus(
        first,
        buildStatus(
          first,
          1,
          [{ type: "Ready", status: false, reason: "Unavailable", message: "m" }],
          {},
          t2,
        ),
      ),
    ).toBe(true);
    expect(sameStatus(first, flipped)).toBe(false);
  });
});
