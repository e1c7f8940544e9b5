import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test, vi } from "vitest";
import { otelExporterSchema } from "../../src/config/schema.ts";
import { GatewayMetrics } from "../../src/runtime/metrics.ts";
import { startOtelMetrics } from "../../src/telemetry/otel-metrics.ts";
import { type OtlpProtocol, OtlpReceiver } from "../audit/receivers/otlp-receiver.ts";
import { connectClient, startGatewayWithConfig } from "../proxy/support/gateway.ts";
import { startStatelessSdkServer } from "../support/stateless-sdk-server.ts";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each<OtlpProtocol>(["grpc", "http/protobuf", "http/json"])("otel metrics over %s", (protocol) => {
  test("pushes the same values /metrics shows, with the service name and headers", async () => {
    const receiver = await OtlpReceiver.start(protocol);
    cleanups.push(() => receiver.close());
    const metrics = new GatewayMetrics();
    cleanups.push(() => metrics.close());
    metrics.recordRequest("demo", "tools/call", 200, 0.003);
    metrics.recordRequest("demo", "tools/call", 200, 0.2);
    metrics.recordUpstreamError("demo", "timeout");
    const config = otelExporterSchema.parse({
      name: "collector",
      endpoint: receiver.url,
      protocol,
      service_name: "gw-metrics",
      export_logs: false,
      export_metrics: true,
      timeout: 5,
      headers: { authorization: "Bearer collector-token" },
    });
    const otel = startOtelMetrics(config, metrics, { intervalMs: 200 });
    cleanups.push(() => otel.shutdown());

    const point = (name: string) => receiver.metricPoints.findLast((p) => p.name === name);
    await vi.waitFor(() => expect(point("svc_gateway_requests_total")).toBeDefined(), { timeout: 10_000 });
    expect(point("svc_gateway_requests_total")).toMatchObject({
      resource: { "service.name": "gw-metrics" },
      attributes: { server: "demo", method: "tools/call", status: "200" },
      value: 2,
    });
    expect(point("svc_gateway_request_duration_seconds")?.value).toBe(2); // histogram: the count
    expect(point("svc_gateway_upstream_errors_total")?.attributes).toEqual({
      server: "demo",
      kind: "timeout",
    });
    expect(point("process_resident_memory_bytes")?.value).toBeGreaterThan(0);
    expect(receiver.requests[0]?.headers.authorization).toBe("Bearer collector-token");

    // A later request shows in the next push: the export reads the live counters.
    metrics.recordRequest("demo", "tools/call", 200, 0.01);
    await vi.waitFor(() => expect(point("svc_gateway_requests_total")?.value).toBe(3), { timeout: 10_000 });
  }, 30_000);
});

test("a real gateway with export_metrics pushes its request counts when it stops", async () => {
  const receiver = await OtlpReceiver.start("grpc");
  cleanups.push(() => receiver.close());
  const upstream = await startStatelessSdkServer(() => new McpServer({ name: "empty", version: "1.0.0" }), {
    jsonResponse: true,
  });
  cleanups.push(() => upstream.close());
  const config = [
    'version: "1.0"',
    "servers:",
    "  - name: demo",
    `    url: ${JSON.stringify(upstream.url)}`,
    "    upstream_auth_type: none",
    "exporters:",
    "  otel:",
    "    - name: collector",
    `      endpoint: ${JSON.stringify(receiver.url)}`,
    "      protocol: grpc",
    "      service_name: gw-e2e-metrics",
    "      export_logs: false",
    "      export_metrics: true",
  ].join("\n");
  const gateway = await startGatewayWithConfig(config);
  cleanups.push(() => gateway.close());
  const { client } = await connectClient(`${gateway.url}/demo/mcp`);
  await client.close();

  await gateway.close(); // the last push happens on the way out
  const initialize = receiver.metricPoints.find(
    (p) => p.name === "svc_gateway_requests_total" && p.attributes.method === "initialize",
  );
  expect(initialize).toMatchObject({
    resource: { "service.name": "gw-e2e-metrics" },
    attributes: { server: "demo", method: "initialize", status: "200" },
    value: 1,
  });
}, 60_000);
