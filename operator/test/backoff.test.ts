import { describe, expect, it } from "vitest";
import { Backoff, type BackoffSchedule, backoffCeiling, WATCH_BACKOFF } from "../src/controller/backoff.ts";

const schedule: BackoffSchedule = { baseMs: 1_000, maxMs: 30_000, jitter: 0.2, resetAfterMs: 60_000 };

function delays(backoff: Backoff, count: number): number[] {
  return Array.from({ length: count }, () => backoff.failed());
}

describe("watch restart backoff", () => {
  it("doubles from the base delay up to the cap", () => {
    expect(Array.from({ length: 8 }, (_, attempt) => backoffCeiling(schedule, attempt))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect(backoffCeiling(schedule, 10_000)).toBe(30_000);
  });

  it("grows every gap until the cap, whatever the jitter draws", () => {
    const now = () => 0;
    for (const draws of [() => 0, () => 0.999_999, alternating()]) {
      const gaps = delays(new Backoff(schedule, draws, now), 10);
      const beforeCap = gaps.slice(0, 5);
      for (let i = 1; i < beforeCap.length; i++)
        expect(beforeCap[i] as number).toBeGreaterThan(beforeCap[i - 1] as number);
      for (const gap of gaps) expect(gap).toBeLessThanOrEqual(schedule.maxMs);
      for (const gap of gaps.slice(5))
        expect(gap).toBeGreaterThanOrEqual(schedule.maxMs * (1 - schedule.jitter));
    }
  });

  it("jitters each delay downwards by at most the jitter fraction", () => {
    const seen = new Set<number>();
    const backoff = new Backoff(schedule, Math.random, () => 0);
    for (const [attempt, gap] of delays(backoff, 6).entries()) {
      const ceiling = backoffCeiling(schedule, attempt);
      expect(gap).toBeLessThanOrEqual(ceiling);
      expect(gap).toBeGreaterThanOrEqual(Math.floor(ceiling * (1 - schedule.jitter)));
      seen.add(gap / ceiling);
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it("starts over at the base delay once a watch ran longer than resetAfterMs without failing", () => {
    let clock = 0;
    const backoff = new Backoff(
      schedule,
      () => 0,
      () => clock,
    );
    expect(delays(backoff, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    clock = 8_000 + schedule.resetAfterMs; // retried at 8 s and ran exactly resetAfterMs: not yet
    expect(backoff.failed()).toBe(16_000);
    clock += 16_000 + schedule.resetAfterMs + 1;
    expect(backoff.failed()).toBe(1_000);
    expect(backoff.failures).toBe(1);
  });

  it("names every problem of an invalid schedule at once", () => {
    expect(() => new Backoff({ baseMs: 0, maxMs: -1, jitter: 0.5, resetAfterMs: 0 })).toThrow(
      /baseMs must be positive.*maxMs must be at least baseMs.*jitter must be in \[0, 0\.5\).*resetAfterMs must be positive/,
    );
    expect(() => new Backoff(WATCH_BACKOFF)).not.toThrow();
  });
});

function alternating(): () => number {
  let high = false;
  return () => {
    high = !high;
    return high ? 0.999_999 : 0;
  };
}
