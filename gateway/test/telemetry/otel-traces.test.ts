import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, describe, expect, test } from "vitest";
import { otelExporterSchema } from "../../src/config/schema.ts";
import { startOtelTraces } from "../../src/telemetry/otel-traces.ts";
import { type OtlpProtocol, OtlpReceiver } from "../audit/receivers/otlp-receiver.ts";
import { connectClient, startGatewayWithConfig } from "../proxy/support/gateway.ts";
import { startStatelessSdkServer } from "../support/stateless-sdk-server.ts";

const CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN_ID = "00f067aa0ba902b7";
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-${CLIENT_SPAN_ID}-01`;
const CLIENT_TRACESTATE = "vendor=opaque";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function parseTraceparent(value: string | undefined) {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(value ?? "");
  if (match === null) throw new Error(`not a traceparent: ${value}`);
  return { traceId: match[1], spanId: match[2], flags: match[3] };
}

describe.each<OtlpProtocol>(["grpc", "http/protobuf", "http/json"])("request spans over %s", (protocol) => {
  test("are children of the client's trace context and parents of the upstream call", async () => {
    const receiver = await OtlpReceiver.start(protocol);
    cleanups.push(() => receiver.close());
    const config = otelExporterSchema.parse({
      name: "collector",
      endpoint: receiver.url,
      protocol,
      service_name: "gw-traces",
      export_traces: true,
      timeout: 5,
      headers: { "x-tenant": "t1" },
    });
    const traces = startOtelTraces([config]);
    cleanups.push(() => traces.shutdown());

    const span = traces.tracer.startRequest("POST", {
      traceparent: CLIENT_TRACEPARENT,
      tracestate: CLIENT_TRACESTATE,
    });
    span.event("authenticated");
    const upstream = span.upstreamHeaders();
    span.end({
      requestId: "req-1",
      server: "demo",
      method: "tools/call",
      status: 502,
      provider: "corp",
      errorCode: "upstream_failed",
    });
    await traces.shutdown(); // exports what is buffered

    const sent = parseTraceparent(upstream.traceparent);
    expect(sent.traceId).toBe(CLIENT_TRACE_ID);
    expect(sent.spanId).not.toBe(CLIENT_SPAN_ID);
    expect(upstream.tracestate).toBe(CLIENT_TRACESTATE);
    expect(receiver.spans).toHaveLength(1);
    expect(receiver.spans[0]).toMatchObject({
      resource: { "service.name": "gw-traces" },
      name: "tools/call demo",
      traceId: CLIENT_TRACE_ID,
      spanId: sent.spanId,
      parentSpanId: CLIENT_SPAN_ID,
      kind: 2, // SPAN_KIND_SERVER
      attributes: {
        "svc.request_id": "req-1",
        "svc.server": "demo",
        "mcp.method.name": "tools/call",
        "http.request.method": "POST",
        "http.response.status_code": 502,
        "svc.identity_provider": "corp",
        "error.type": "upstream_failed",
      },
      events: [{ name: "authenticated", attributes: {} }],
      status: { code: 2 }, // STATUS_CODE_ERROR: a 5xx
    });
    expect(receiver.requests[0]?.headers["x-tenant"]).toBe("t1");
  }, 30_000);
});

/** An upstream whose one tool answers with the trace context it received. */
async function traceEchoUpstream() {
  const upstream = await startStatelessSdkServer(
    () => {
      const server = new McpServer({ name: "trace-echo", version: "1.0.0" });
      server.registerTool(
        "trace_context",
        { description: "the traceparent this server received" },
        (extra) => {
          const headers = extra.requestInfo?.headers ?? {};
          return {
            content: [
              {
                type: "text",
                text: JSON.stringify({ traceparent: headers.traceparent, tracestate: headers.tracestate }),
              },
            ],
          };
        },
      );
      return server;
    },
    { jsonResponse: true },
  );
  cleanups.push(() => upstream.close());
  return upstream;
}

async function upstreamTraceContext(gatewayUrl: string) {
  const { client } = await connectClient(`${gatewayUrl}/demo/mcp`, {
    headers: { traceparent: CLIENT_TRACEPARENT, tracestate: CLIENT_TRACESTATE },
  });
  cleanups.push(() => client.close());
  const result = await client.callTool({ name: "trace_context", arguments: {} });
  const [content] = result.content as { type: string; text: string }[];
  return JSON.parse(content?.text ?? "{}") as { traceparent?: string; tracestate?: string };
}

function gatewayConfig(upstreamUrl: string, otel: string): string {
  return [
    'version: "1.0"',
    "servers:",
    "  - name: demo",
    `    url: ${JSON.stringify(upstreamUrl)}`,
    "    upstream_auth_type: none",
    otel,
  ].join("\n");
}

describe("a real gateway", () => {
  test("without export_traces passes the client's trace context to the upstream untouched", async () => {
    const upstream = await traceEchoUpstream();
    const gateway = await startGatewayWithConfig(gatewayConfig(upstream.url, ""));
    cleanups.push(() => gateway.close());
    expect(await upstreamTraceContext(gateway.url)).toEqual({
      traceparent: CLIENT_TRACEPARENT,
      tracestate: CLIENT_TRACESTATE,
    });
  }, 60_000);

  const tracedConfig = (endpoint: string) =>
    [
      "exporters:",
      "  otel:",
      "    - name: collector",
      `      endpoint: ${JSON.stringify(endpoint)}`,
      "      protocol: http/protobuf",
      "      service_name: gw-e2e",
      "      export_logs: false",
      "      export_traces: true",
      "      timeout: 5",
    ].join("\n");

  test("with export_traces makes a span per request, child of the client's and parent of the upstream's", async () => {
    const receiver = await OtlpReceiver.start("http/protobuf");
    cleanups.push(() => receiver.close());
    const upstream = await traceEchoUpstream();
    const gateway = await startGatewayWithConfig(gatewayConfig(upstream.url, tracedConfig(receiver.url)));
    cleanups.push(() => gateway.close());

    const seen = await upstreamTraceContext(gateway.url);
    const sent = parseTraceparent(seen.traceparent);
    expect(sent.traceId).toBe(CLIENT_TRACE_ID);
    expect(sent.spanId).not.toBe(CLIENT_SPAN_ID);
    expect(seen.tracestate).toBe(CLIENT_TRACESTATE);

    await gateway.close(); // flushes the buffered spans
    const span = receiver.spans.find((s) => s.spanId === sent.spanId);
    expect(span).toMatchObject({
      resource: { "service.name": "gw-e2e" },
      name: "tools/call demo",
      traceId: CLIENT_TRACE_ID,
      parentSpanId: CLIENT_SPAN_ID,
      attributes: {
        "svc.server": "demo",
        "mcp.method.name": "tools/call",
        "http.response.status_code": 200,
      },
    });
    expect(span?.events.map((e) => e.name)).toEqual([
      "routed",
      "authenticated",
      "server_authorized",
      "limits_checked",
      "session_checked",
      "parsed",
      "capabilities_authorized",
      "upstream_answered",
    ]);
    // No identity of the caller on the span (the audit trail has it, joined by svc.request_id).
    expect(Object.keys(span?.attributes ?? {}).filter((k) => /sub|user|principal/.test(k))).toEqual([]);
    // initialize, the initialized notification and the call: one span each, all in the client's trace.
    expect(receiver.spans.filter((s) => s.traceId === CLIENT_TRACE_ID).length).toBeGreaterThanOrEqual(3);
  }, 60_000);
});
