import { expect, test } from "vitest";
import { GatewayMetrics, methodLabel } from "../../src/runtime/metrics.ts";

/** The value of an unlabelled sample in Prometheus text. */
function sample(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return match === null ? undefined : Number(match[1]);
}

test("the latency histogram is cumulative, with +Inf, sum and count", () => {
  const metrics = new GatewayMetrics();
  for (const seconds of [0.0005, 0.003, 0.003, 0.2, 99])
    metrics.recordRequest("a", "tools/call", 200, seconds);
  const text = metrics.render();
  const bucket = (le: string) =>
    Number(
      new RegExp(
        `svc_gateway_request_duration_seconds_bucket\\{server="a",method="tools/call",status="200",le="${le}"\\} (\\d+)`,
      ).exec(text)?.[1],
    );
  expect([bucket("0.001"), bucket("0.005"), bucket("0.25"), bucket("30"), bucket("\\+Inf")]).toEqual([
    1, 3, 4, 4, 5,
  ]);
  expect(text).toContain(
    'svc_gateway_request_duration_seconds_count{server="a",method="tools/call",status="200"} 5',
  );
  expect(text).toContain('svc_gateway_requests_total{server="a",method="tools/call",status="200"} 5');
});

test("label values are escaped, unknown methods collapse to other, streams and reloads are counted", () => {
  const metrics = new GatewayMetrics();
  metrics.recordRequest('we"ird\\name', methodLabel("made/up"), 404, 0.001);
  metrics.streamOpened("a");
  metrics.streamOpened("a");
  metrics.streamClosed("a");
  metrics.recordReload(false);
  metrics.recordUpstreamError("a", "timeout");
  const text = metrics.render();
  expect(text).toContain(
    'svc_gateway_requests_total{server="we\\"ird\\\\name",method="other",status="404"} 1',
  );
  expect(text).toContain('svc_gateway_open_streams{server="a"} 1');
  expect(text).toContain('svc_gateway_config_reloads_total{result="failure"} 1');
  expect(text).toContain('svc_gateway_upstream_errors_total{server="a",kind="timeout"} 1');
  expect(methodLabel("tools/list")).toBe("tools/list");
  expect(methodLabel(42)).toBe("other");
});

test("resident memory is a gauge of this process's RSS", () => {
  const metrics = new GatewayMetrics();
  try {
    const text = metrics.render();
    expect(text).toContain("# TYPE process_resident_memory_bytes gauge");
    const rss = sample(text, "process_resident_memory_bytes");
    // Read at render time from the process itself: within a few MB of what Node reports right after.
    expect(Math.abs((rss ?? 0) - process.memoryUsage.rss())).toBeLessThan(16 * 1024 * 1024);
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
  } finally {
    metrics.close();
  }
});

test("the heap and external memory are gauges read from this process", () => {
  const metrics = new GatewayMetrics();
  try {
    const text = metrics.render();
    for (const name of [
      "nodejs_heap_size_used_bytes",
      "nodejs_heap_size_total_bytes",
      "nodejs_external_memory_bytes",
      "nodejs_array_buffers_bytes",
    ]) {
      expect(text).toContain(`# TYPE ${name} gauge`);
    }
    const used = sample(text, "nodejs_heap_size_used_bytes") ?? 0;
    const total = sample(text, "nodejs_heap_size_total_bytes") ?? 0;
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(total);
    expect(sample(text, "nodejs_array_buffers_bytes") ?? -1).toBeLessThanOrEqual(
      sample(text, "nodejs_external_memory_bytes") ?? 0,
    );
  } finally {
    metrics.close();
  }
});

test("a blocked event loop shows in the delay gauge, and leaves it two windows later", async () => {
  const metrics = new GatewayMetrics({ eventLoopWindowMs: 100 });
  try {
    const delay = () => sample(metrics.render(), "nodejs_eventloop_delay_max_seconds") ?? Number.NaN;
    expect(metrics.render()).toContain("# TYPE nodejs_eventloop_delay_max_seconds gauge");
    const stall = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // a synchronous stall: the monitor's next sample is this late
      }
    };
    // Each attempt stalls, and reads what the monitor recorded for the stall before (its sample is taken on the
    // next turn of the loop; the very first stall may also come before the monitor's first sample).
    await expect
      .poll(
        () => {
          stall(400);
          return delay();
        },
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(0.3);
    // Two 100 ms windows later the stall is forgotten (polled: a loaded machine may add stalls of its own).
    await expect.poll(delay, { timeout: 10_000, interval: 50 }).toBeLessThan(0.3);
  } finally {
    metrics.close();
  }
}, 40_000);
