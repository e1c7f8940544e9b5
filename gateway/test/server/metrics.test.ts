import { expect, test } from "vitest";
import { GatewayMetrics, methodLabel } from "../../src/server/metrics.ts";

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
