// The bench's export receivers in a process of their own (forked by export-receivers.ts): decoding and keeping every
// exported event costs CPU and garbage collection, and inside the load generator that slowed the load generator
// itself, so the exported path measured less than the gateway's own cost. Here they cost what a real collector
// costs on the same machine and nothing more. Talks to its parent over the IPC channel: `ready` once listening, the
// received counts on `counts`, and it closes and exits on `close`.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OtlpReceiver } from "../test/audit/receivers/otlp-receiver.ts";
import { SearchIndexReceiver } from "../test/audit/receivers/search-index-receiver.ts";
import { SiemReceiver } from "../test/audit/receivers/siem-receiver.ts";

export type ReceiversRequest = { type: "counts" } | { type: "close" };
export type ReceiversReply =
  | { type: "ready"; exportersYaml: string; env: Record<string, string> }
  | { type: "counts"; counts: Record<string, number> }
  | { type: "closed" };

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

process.on("message", (message: ReceiversRequest) => {
  if (message.type === "counts") {
    reply({
      type: "counts",
      counts: {
        "search_index:es": es.received.length,
        "otel:collector": otlp.received.length,
        "siem:sentinel": siem.received.length,
      },
    });
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
