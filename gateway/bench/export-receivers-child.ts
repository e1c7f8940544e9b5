// The bench's export receivers in a process of their own (forked by export-receivers.ts): decoding and keeping every
// exported event costs CPU and garbage collection, and inside the load generator that slowed the load generator
// itself, so the exported path measured less than the gateway's own cost. Here they cost what a real collector
// costs on the same machine and nothing more. They stand in for remote services, so while load runs they only keep
// the bodies they are sent and answer them as accepted (`deferDecoding`); `settle`, sent once a measurement is over,
// decodes and checks what was kept (wire format included), so that work stays out of every measured interval, and
// `verify` checks at the end that every receiver got every event: each gateway instance's chain complete from seq 0,
// every hash matching its content and linking to the event before. Talks to its parent over the IPC channel: `ready`
// once listening, `settled` and `verified` with what it found, and it closes and exits on `close`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ChainedAuditEvent, GENESIS_HASH } from "../src/audit/audit-event.ts";
import { hashOf } from "../src/audit/hash-chain.ts";
import { OtlpReceiver } from "../test/audit/receivers/otlp-receiver.ts";
import { SearchIndexReceiver } from "../test/audit/receivers/search-index-receiver.ts";
import { SiemReceiver } from "../test/audit/receivers/siem-receiver.ts";

export type ReceiversRequest = { type: "settle" } | { type: "verify" } | { type: "close" };
export type ReceiversReply =
  | { type: "ready"; exportersYaml: string; env: Record<string, string> }
  | { type: "settled"; counts: Record<string, number>; decodeCpuMs: number }
  | { type: "verified"; report: DeliveryReport }
  | { type: "closed" };

/** What each receiver got, checked against the chains the gateway wrote. */
export interface DeliveryReport {
  /** Distinct events (by instance and seq) per exporter name; redeliveries counted once. */
  events: Record<string, number>;
  /** Redelivered copies per exporter name (at least once allows them). */
  duplicates: Record<string, number>;
  /** Everything wrong: wire-format errors, bodies that did not decode, gaps, broken links, differing receivers. */
  problems: string[];
  /** CPU the checking itself took (after load). */
  cpuMs: number;
}

function reply(message: ReceiversReply): void {
  process.send?.(message);
}

const dir = process.argv[2];
if (dir === undefined || process.send === undefined) {
  throw new Error(
    "export-receivers-child.ts: run it through startExportReceivers (forked, with a directory argument)",
  );
}

const es = await SearchIndexReceiver.start();
const otlp = await OtlpReceiver.start("http/protobuf");
const siem = await SiemReceiver.start();
const caFile = join(dir, "siem-ca.pem");
await writeFile(caFile, siem.ca);
es.deferDecoding = true;
otlp.deferDecoding = true;
siem.deferDecoding = true;

const receivedBy = (): Record<string, ChainedAuditEvent[]> => ({
  "search_index:es": es.received,
  "otel:collector": otlp.received,
  "siem:sentinel": siem.received,
});

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

/** Every receiver's events deduplicated and checked as complete, verified chains; the same chains everywhere. */
function verify(): DeliveryReport {
  const start = process.cpuUsage();
  const problems = [
    ...es.wireErrors.map((error) => `search_index:es wire format: ${error}`),
    ...otlp.decodeErrors.map((error) => `otel:collector: ${error}`),
    ...siem.decodeErrors.map((error) => `siem:sentinel: ${error}`),
    ...siem.unexpected.map((request) => `siem:sentinel: unexpected request ${request}`),
  ];
  const events: Record<string, number> = {};
  const duplicates: Record<string, number> = {};
  const lastSeqs: Record<string, string> = {};
  for (const [name, received] of Object.entries(receivedBy())) {
    const chains = new Map<string, Map<number, ChainedAuditEvent>>();
    for (const event of received) {
      let chain = chains.get(event.instance);
      if (chain === undefined) {
        chain = new Map();
        chains.set(event.instance, chain);
      }
      chain.set(event.seq, event);
    }
    let distinct = 0;
    const last: string[] = [];
    for (const [instance, chain] of chains) {
      distinct += chain.size;
      last.push(`${instance}:${chain.size - 1}`);
      let previousHash = GENESIS_HASH;
      for (let seq = 0; seq < chain.size; seq++) {
        const event = chain.get(seq);
        if (event === undefined) {
          problems.push(`${name}: instance ${instance} has ${chain.size} events but no seq ${seq}`);
          break;
        }
        const { hash, ...unsigned } = event;
        if (event.prev_hash !== previousHash) {
          problems.push(`${name}: instance ${instance} seq ${seq} does not link to the event before`);
          break;
        }
        if (hashOf(unsigned) !== hash) {
          problems.push(
            `${name}: instance ${instance} seq ${seq} arrived with a hash that does not match it`,
          );
          break;
        }
        previousHash = hash;
      }
    }
    events[name] = distinct;
    duplicates[name] = received.length - distinct;
    lastSeqs[name] = last.sort().join(",");
  }
  if (new Set(Object.values(lastSeqs)).size > 1) {
    problems.push(`the receivers got different chains: ${JSON.stringify(lastSeqs)}`);
  }
  return { events, duplicates, problems, cpuMs: cpuMsSince(start) };
}

process.on("message", (message: ReceiversRequest) => {
  if (message.type === "settle") {
    const start = process.cpuUsage();
    es.decodeDeferred();
    otlp.decodeDeferred();
    siem.decodeDeferred();
    const counts = Object.fromEntries(
      Object.entries(receivedBy()).map(([name, list]) => [name, list.length]),
    );
    reply({ type: "settled", counts, decodeCpuMs: cpuMsSince(start) });
  } else if (message.type === "verify") {
    reply({ type: "verified", report: verify() });
  } else if (message.type === "close") {
    void Promise.all([es.close(), otlp.close(), siem.close()]).finally(() => {
      reply({ type: "closed" });
      process.disconnect();
    });
  }
});
// The parent gone (a crashed bench) leaves nobody to tell us to close.
process.on("disconnect", () => process.exit(0));

reply({
  type: "ready",
  exportersYaml: `exporters:
  search_index:
    - name: es
      url: ${es.url}
  otel:
    - name: collector
      endpoint: ${otlp.url}
      protocol: ${otlp.protocol}
  siem:
    - name: sentinel
      dcr_endpoint: ${siem.url}
      dcr_immutable_id: ${siem.dcrImmutableId}
      dcr_stream_name: ${siem.streamName}
      tenant_id: ${siem.tenantId}
      client_id: ${siem.clientId}
      client_secret: ${siem.clientSecret}
`,
  env: { AZURE_AUTHORITY_HOST: siem.url, NODE_EXTRA_CA_CERTS: caFile },
});
