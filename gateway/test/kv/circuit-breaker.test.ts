import { describe, expect, it, vi } from "vitest";
import { CircuitBreaker } from "../../src/kv/circuit-breaker.ts";
import type { BreakerState } from "../../src/kv/kv-store.ts";

function breaker(probe: () => Promise<void>, openMs = 20) {
  const transitions: BreakerState[] = [];
  const instance = new CircuitBreaker({
    failureThreshold: 3,
    openMs,
    probe,
    onChange: (state) => transitions.push(state),
  });
  return { instance, transitions };
}

describe("CircuitBreaker", () => {
  it("opens only after consecutive failures; a success resets the count", () => {
    const { instance } = breaker(async () => {}, 60_000);
    instance.failure(new Error("a"));
    instance.failure(new Error("b"));
    instance.success();
    instance.failure(new Error("c"));
    instance.failure(new Error("d"));
    expect(instance.state).toBe("closed");
    instance.failure(new Error("e"));
    expect(instance.state).toBe("open");
    expect(instance.allows()).toBe(false);
    expect(instance.lastError).toBe("e");
    instance.dispose();
  });

  it("probes after openMs, re-opens when the probe fails, closes when it succeeds", async () => {
    let healthy = false;
    const probe = vi.fn(async () => {
      if (!healthy) throw new Error("still down");
    });
    const { instance, transitions } = breaker(probe);
    for (let i = 0; i < 3; i++) instance.failure(new Error("down"));
    await vi.waitFor(() => expect(probe).toHaveBeenCalledTimes(2), { timeout: 2000, interval: 5 });
    expect(instance.lastError).toBe("still down");
    healthy = true;
    await vi.waitFor(() => expect(instance.state).toBe("closed"), { timeout: 2000, interval: 5 });
    expect(transitions.slice(0, 4)).toEqual(["open", "half_open", "open", "half_open"]);
    expect(transitions.at(-1)).toBe("closed");
    expect(instance.lastError).toBeUndefined();
    expect(instance.allows()).toBe(true);
    instance.dispose();
  });

  it("ignores a late success while open: only the probe closes it", () => {
    const { instance } = breaker(async () => {}, 60_000);
    for (let i = 0; i < 3; i++) instance.failure(new Error("down"));
    instance.success();
    expect(instance.state).toBe("open");
    instance.dispose();
  });

  it("probes at once when told the backend is back", async () => {
    const { instance, transitions } = breaker(async () => {}, 60_000);
    for (let i = 0; i < 3; i++) instance.failure(new Error("down"));
    instance.probeNow();
    await vi.waitFor(() => expect(instance.state).toBe("closed"), { timeout: 2000, interval: 5 });
    expect(transitions).toEqual(["open", "half_open", "closed"]);
    instance.dispose();
  });
});
