import { getHeapSpaceStatistics } from "node:v8";
import { expect, test } from "vitest";
import { MemoryTrimmer, memoryReducingGc } from "../../src/runtime/memory-trim.ts";

const newSpaceBytes = () =>
  getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;

test("the memory-reducing GC is reachable without --expose-gc, shrinks the young generation, and leaves no global gc", async () => {
  const gc = memoryReducingGc();
  expect(gc).toBeTypeOf("function");
  expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  // Short-lived garbage, as requests make: V8 grows the young generation for it.
  let garbage: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    garbage.push({ i, text: `value ${i}` });
    if (garbage.length > 50_000) garbage = [];
  }
  garbage = [];
  const before = newSpaceBytes();
  await gc?.();
  expect(newSpaceBytes()).toBeLessThan(before);
  expect(newSpaceBytes()).toBeLessThanOrEqual(2 * 1024 * 1024);
});

test("trims once requests have been seen and then none for the quiet period, and only then", () => {
  let trims = 0;
  const trimmer = new MemoryTrimmer({
    gc: async () => {
      trims += 1;
    },
    quietMs: 30_000,
    checkMs: 10_000,
    timer: false, // the test drives check() itself
  });
  // Never used: nothing to give back.
  for (let i = 0; i < 5; i++) trimmer.check();
  expect(trims).toBe(0);
  // Busy: every look sees new requests.
  for (let i = 0; i < 5; i++) {
    trimmer.requestSeen();
    trimmer.check();
  }
  expect(trims).toBe(0);
  // Quiet: the first look notes the count, then quietMs / checkMs looks without a new request.
  trimmer.check();
  expect(trims).toBe(0);
  for (let i = 0; i < 2; i++) trimmer.check();
  expect(trims).toBe(1);
  // Quiet on: nothing new to give back.
  for (let i = 0; i < 5; i++) trimmer.check();
  expect(trims).toBe(1);
  trimmer.stop();
});

test("a trimmer without a GC does nothing", async () => {
  const trimmer = new MemoryTrimmer({ gc: undefined, timer: false });
  trimmer.requestSeen();
  await trimmer.trim();
  trimmer.stop();
});
