import { afterEach, describe, expect, test, vi } from "vitest";
import { completeEvent } from "../../src/audit/audit-event.ts";
import { otelLogsSink } from "../../src/audit/exporters/otel-logs-sink.ts";
import { HashChain } from "../../src/audit/hash-chain.ts";
import { SinkWriteError } from "../../src/audit/sink.ts";
import { otelExporterSchema } from "../../src/config/schema.ts";
import { type OtlpProtocol, OtlpReceiver } from "./receivers/otlp-receiver.ts";

const SECRET = "otlp-secret-value-123";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(protocol: OtlpProtocol) {
  const receiver = await OtlpReceiver.start(protocol);
  const config = otelExporterSchema.parse({
    name: "collector",
    endpoint: receiver.url,
    protocol,
    service_name: "gw-under-test",
    timeout: 5,
    headers: { "x-api-key": SECRET },
  });
  const sink = otelLogsSink(config);
  cleanups.push(() => receiver.close());
  cleanups.push(async () => sink.close?.());
  return { receiver, sink };
}

function events() {
  const chain = new HashChain("gw-1");
  return [
    chain.link(
      completeEvent(
        {
          kind: "rbac_decision",
          time: "2026-11-25T20:00:00.123Z",
          request_id: "r1",
          server: "demo",
          method: "tools/call",
          capability: "tools/echo",
          subject: "alice",
          groups: ["dev", "ops"],
          decision: "deny",
          reason: "no rule",
          status: 403,
        },
        "gw",
      ),
    ),
    chain.link(
      completeEvent(
        { kind: "call_completed", request_id: "r2", server: "demo", status: 200, latency_ms: 12.5 },
        "gw",
      ),
    ),
  ];
}

describe.each<OtlpProtocol>(["grpc", "http/protobuf", "http/json"])("otel logs sink over %s", (protocol) => {
  test("delivers each event as a log record with every field as an attribute", async () => {
    const { receiver, sink } = await setup(protocol);
    const batch = events();
    expect(sink.name).toBe("otel:collector");
    await sink.write(batch);
    // write resolves only after the receiver answered, so the records are there already.
    expect(receiver.received).toEqual(batch);
    const [denied, completed] = receiver.logRecords;
    expect(denied?.resource["service.name"]).toBe("gw-under-test");
    expect(denied?.scope).toBe("svc-gateway.audit");
    expect(denied?.body).toBe("rbac_decision deny tools/echo on demo");
    expect(denied?.eventName).toBe("svc.audit.rbac_decision");
    expect(denied?.severityText).toBe("WARN");
    expect(denied?.timeUnixNano).toBe("1795636800123000000");
    expect(denied?.attributes["svc.audit.hash"]).toBe(batch[0]?.hash);
    expect(denied?.attributes["svc.audit.groups"]).toEqual(["dev", "ops"]);
    expect(denied?.attributes).not.toHaveProperty("svc.audit.latency_ms"); // null fields are left out
    expect(completed?.severityText).toBe("INFO");
    expect(receiver.requests.map((r) => [r.signal, r.headers["x-api-key"]])).toEqual([["logs", SECRET]]);
  });

  test("a refused export rejects with SinkWriteError naming the sink, never the header values", async () => {
    const { receiver, sink } = await setup(protocol);
    receiver.failNext(1, 400);
    const error = await sink.write(events()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SinkWriteError);
    expect((error as Error).message).toMatch(/^otel:collector: export of 2 log records failed/);
    expect((error as Error).message).not.toContain(SECRET);
    expect(receiver.received).toEqual([]);
    await sink.write(events());
    expect(receiver.received).toHaveLength(2);
  });
});

describe.each<OtlpProtocol>(["grpc", "http/protobuf"])(
  "otel logs sink over %s when the collector is down",
  (protocol) => {
    test("rejects within the timeout, and delivers again once the collector is back on the same port", async () => {
      const { receiver, sink } = await setup(protocol);
      await sink.write(events()); // connected first, so the outage cuts a live connection
      await receiver.down();
      const started = Date.now();
      await expect(sink.write(events())).rejects.toBeInstanceOf(SinkWriteError);
      expect(Date.now() - started).toBeLessThan(5000 + 1500);
      await receiver.up();
      // As the audit queue does: retry until it goes through. (gRPC reconnects on its own backoff, from 1 s.)
      await vi.waitFor(() => sink.write(events()), { timeout: 20_000, interval: 250 });
      expect(receiver.received).toHaveLength(4);
    }, 30_000);
  },
);

describe.each<OtlpProtocol>(["grpc", "http/protobuf", "http/json"])("otel logs sink over %s", (protocol) => {
  test("counts an OTLP partial success as delivered (the answer does not say which records were rejected)", async () => {
    const { receiver, sink } = await setup(protocol);
    receiver.rejectNext(1);
    await sink.write(events());
    expect(receiver.received).toHaveLength(1);
  });
});

describe("otel logs sink and a busy collector", () => {
  test("a temporarily unavailable collector (503) is retried by the exporter within the timeout", async () => {
    const { receiver, sink } = await setup("http/json");
    receiver.failNext(1, 503);
    await sink.write(events());
    expect(receiver.failed).toBe(1);
    expect(receiver.received).toHaveLength(2);
  }, 30_000);
});
