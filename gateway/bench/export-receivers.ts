// The "exported" bench path's receivers: the three loopback receivers the fault tests use (search index bulk API,
// OTLP logs over http/protobuf, the Azure logs ingestion API with its token endpoint), started by the bench so the
// secured gateway can run with every exporter on. What they received is reported after the run, so a fast number
// cannot come from an export that silently did nothing.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { OtlpReceiver } from "../test/audit/receivers/otlp-receiver.ts";
import { SearchIndexReceiver } from "../test/audit/receivers/search-index-receiver.ts";
import { SiemReceiver } from "../test/audit/receivers/siem-receiver.ts";

export interface ExportReceivers {
  /** The `exporters:` section that points a gateway at the receivers. */
  exportersYaml: string;
  /** What a spawned gateway needs to reach the SIEM receiver (its authority host and its self-signed CA). */
  env: Record<string, string>;
  /** Events each receiver got so far, by exporter name. */
  receivedCounts(): Record<string, number>;
  close(): Promise<void>;
}

export async function startExportReceivers(dir: string): Promise<ExportReceivers> {
  const es = await SearchIndexReceiver.start();
  const otlp = await OtlpReceiver.start("http/protobuf");
  const siem = await SiemReceiver.start();
  const caFile = join(dir, "siem-ca.pem");
  await writeFile(caFile, siem.ca);
  const exportersYaml = `exporters:
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
`;
  return {
    exportersYaml,
    env: { AZURE_AUTHORITY_HOST: siem.url, NODE_EXTRA_CA_CERTS: caFile },
    receivedCounts: () => ({
      "search_index:es": es.received.length,
      "otel:collector": otlp.received.length,
      "siem:sentinel": siem.received.length,
    }),
    close: async () => {
      await Promise.all([es.close(), otlp.close(), siem.close()]);
    },
  };
}
