// The SIEM sink against a loopback token endpoint and logs ingestion endpoint, through the real @azure/identity
// credential and @azure/monitor-ingestion client (HTTPS with a test certificate authority).
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ChainedAuditEvent } from "../../../src/audit/audit-event.ts";
import { SIEM_COLUMNS } from "../../../src/audit/exporters/siem-columns.ts";
import { type SiemExporterConfig, siemSink } from "../../../src/audit/exporters/siem-sink.ts";
import { type AuditSink, SinkWriteError } from "../../../src/audit/sink.ts";
import { siemExporterSchema } from "../../../src/config/schema.ts";
import { SiemReceiver } from "../receivers/siem-receiver.ts";
import { events } from "./siem-events.ts";

let receiver: SiemReceiver;

beforeEach(async () => {
  receiver = await SiemReceiver.start();
});

afterEach(async () => {
  await receiver.close();
});

function configFor(target: SiemReceiver, overrides: Record<string, unknown> = {}): SiemExporterConfig {
  return siemExporterSchema.parse({
    name: "sentinel",
    dcr_endpoint: target.url,
    dcr_immutable_id: target.dcrImmutableId,
    tenant_id: target.tenantId,
    client_id: target.clientId,
    client_secret: target.clientSecret,
    timeout: 5,
    ...overrides,
  });
}

function sinkFor(target: SiemReceiver, overrides: Record<string, unknown> = {}): AuditSink {
  return siemSink(configFor(target, overrides), { authorityHost: target.url, trustedCa: target.ca });
}

async function writeError(sink: AuditSink, batch: readonly ChainedAuditEvent[]): Promise<SinkWriteError> {
  const error = await sink.write(batch).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(SinkWriteError);
  return error as SinkWriteError;
}

describe("siem sink", () => {
  it("uploads the mapped rows, gzipped, with the bearer token, to the DCR stream", {
    timeout: 30_000,
  }, async () => {
    const sink = sinkFor(receiver);
    expect(sink.name).toBe("siem:sentinel");
    const batch = events(3);
    await sink.write(batch);
    await sink.write(events(2));

    expect(receiver.ingestionRequests).toHaveLength(2);
    const [first] = receiver.ingestionRequests;
    expect(first?.path).toBe(`/dataCollectionRules/${receiver.dcrImmutableId}/streams/Custom-SvcGateway_CL`);
    expect(first?.apiVersion).toBe("2023-01-01");
    expect(first?.contentEncoding).toBe("gzip");
    expect(first?.contentType).toMatch(/^application\/json/);
    expect(first?.authorization).toMatch(/^Bearer token-[0-9a-f]{32}$/);
    // The credential caches its token: one token request for both uploads.
    expect(receiver.tokenRequests).toBe(1);

    const row = first?.rows[0] ?? {};
    expect(Object.keys(row)).toEqual(SIEM_COLUMNS.map((column) => column.name));
    const event = batch[0] as ChainedAuditEvent;
    expect(row).toMatchObject({
      TimeGenerated: event.time,
      Kind: "rbac_decision",
      RequestId: "req-0",
      Gateway: "gw-a",
      Instance: "gw-a#1",
      Seq: 0,
      Hash: event.hash,
      PrevHash: "0".repeat(64),
      Groups: ["eng", "ops"],
      Decision: "allow",
      Reason: null,
      Status: 200,
      LatencyMs: 1.25,
      Count: null,
    });
    expect(receiver.received.slice(0, 3)).toEqual(batch);
    expect(receiver.unexpected).toEqual([]);
  });

  it("reports a 429 with its Retry-After and the whole batch left, in one attempt", {
    timeout: 30_000,
  }, async () => {
    const sink = sinkFor(receiver);
    const batch = events(4);
    receiver.failNext(1, 429, 7);
    const error = await writeError(sink, batch);
    expect(error.retryAfterMs).toBe(7000);
    expect(error.remaining).toEqual(batch);
    expect(error.permanent).toBe(false);
    expect(error.message).toContain("siem:sentinel");
    expect(error.message).toContain("HTTP 429");
    // The SDK did not retry behind the queue's back.
    expect(receiver.ingestionRequests).toHaveLength(1);
    expect(receiver.received).toEqual([]);

    await sink.write(error.remaining ?? []);
    expect(receiver.received).toEqual(batch);
  });

  it("reports a 500 as an error naming the status, without an SDK retry", { timeout: 30_000 }, async () => {
    const sink = sinkFor(receiver);
    receiver.failNext(1, 500);
    const error = await writeError(sink, events(2));
    expect(error.message).toMatch(/siem:sentinel: ingestion endpoint answered HTTP 500/);
    expect(error.retryAfterMs).toBeUndefined();
    expect(receiver.ingestionRequests).toHaveLength(1);
  });

  it("leaves only the events from the failed chunk on when a large batch fails part way", {
    timeout: 30_000,
  }, async () => {
    const sink = sinkFor(receiver);
    // ~100 KB per row: the client splits 15 rows into 1 MB chunks.
    const batch = events(15, "x".repeat(100_000));
    receiver.failNext(1, 503, 2, 1);
    const error = await writeError(sink, batch);
    expect(receiver.ingestionRequests).toHaveLength(2);
    const accepted = receiver.ingestionRequests[0]?.rows.length ?? 0;
    expect(accepted).toBeGreaterThan(0);
    expect(accepted).toBeLessThan(batch.length);
    expect(receiver.received).toEqual(batch.slice(0, accepted));
    expect(error.remaining).toEqual(batch.slice(accepted));
    expect(error.retryAfterMs).toBe(2000);

    await sink.write(error.remaining ?? []);
    expect(receiver.received).toEqual(batch);
  });

  it("names a token endpoint refusal without the secret", { timeout: 30_000 }, async () => {
    const wrongSecret = "wrong-secret-value-123";
    const sink = sinkFor(receiver, { client_secret: wrongSecret });
    const error = await writeError(sink, events(1));
    expect(error.message).toContain(
      `token request for tenant ${receiver.tenantId} as client ${receiver.clientId}`,
    );
    expect(error.message).toContain("AADSTS7000215");
    expect(error.message).not.toContain(wrongSecret);
    expect(JSON.stringify(error)).not.toContain(wrongSecret);
    expect(receiver.ingestionRequests).toEqual([]);
  });

  it("names an unreachable token endpoint", { timeout: 30_000 }, async () => {
    const sink = sinkFor(receiver);
    await receiver.down();
    const error = await writeError(sink, events(1));
    expect(error.message).toContain(`siem:sentinel: token request for tenant ${receiver.tenantId}`);
    expect(error.message).toContain("OpenID metadata could not be fetched");
  });

  it("reports an unreachable endpoint, then delivers once it is back on the same port", {
    timeout: 30_000,
  }, async () => {
    const sink = sinkFor(receiver);
    await sink.write(events(1));
    await receiver.down();
    const batch = events(2);
    const error = await writeError(sink, batch);
    expect(error.message).toMatch(/siem:sentinel: ingestion endpoint unreachable \(ECONNREFUSED\)/);
    expect(error.remaining).toEqual(batch);
    await receiver.up();
    await sink.write(batch);
    expect(receiver.received.slice(1)).toEqual(batch);
  });

  it("gives up an attempt after the exporter's timeout", { timeout: 30_000 }, async () => {
    // The schema's minimum is 5 s; one second keeps the test short and exercises the same abort.
    const sink = siemSink(
      { ...configFor(receiver), timeout: 1 },
      { authorityHost: receiver.url, trustedCa: receiver.ca },
    );
    await sink.write(events(1));
    receiver.hangNext(1);
    const batch = events(2);
    const started = performance.now();
    const error = await writeError(sink, batch);
    expect(performance.now() - started).toBeLessThan(4000);
    expect(error.message).toBe("siem:sentinel: upload timed out after 1 s");
    expect(error.remaining).toEqual(batch);
  });

  it("reaches a test authority from a spawned process through AZURE_AUTHORITY_HOST and NODE_EXTRA_CA_CERTS", {
    timeout: 60_000,
  }, async () => {
    // How a test points a real gateway process at this receiver: no sink option crosses a process boundary.
    const directory = await mkdtemp(join(tmpdir(), "siem-ca-"));
    try {
      const caFile = join(directory, "ca.pem");
      await writeFile(caFile, receiver.ca);
      const script = `
          import { siemSink } from ${JSON.stringify(new URL("../../../src/audit/exporters/siem-sink.ts", import.meta.url).href)};
          import { events } from ${JSON.stringify(new URL("./siem-events.ts", import.meta.url).href)};
          await siemSink(JSON.parse(process.env.SIEM_CONFIG)).write(events(2));
        `;
      await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
        env: {
          ...process.env,
          AZURE_AUTHORITY_HOST: receiver.url,
          NODE_EXTRA_CA_CERTS: caFile,
          SIEM_CONFIG: JSON.stringify(configFor(receiver)),
        },
      });
      expect(receiver.received).toEqual(events(2));
      expect(receiver.unexpected).toEqual([]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it("refuses a config without the fields an enabled exporter needs", () => {
    const config = siemExporterSchema.parse({ name: "off", enabled: false });
    expect(() => siemSink(config)).toThrow(
      "siem:off: dcr_endpoint, dcr_immutable_id, tenant_id, client_id, client_secret required",
    );
  });
});
