// Which exporters a configuration turns on, as the sink names the audit log uses. Kept apart from the factory
// (index.ts) so `svc-gateway validate` can say it without loading the exporters' client libraries.
import type { ExportersConfig } from "../../config/schema.ts";

/** An exporter's name as the audit log, /health and the metrics call its sink. */
export function exporterSinkName(type: keyof ExportersConfig, name: string): string {
  return `${type}:${name}`;
}

/** `<type>:<name>` of every enabled exporter, in configuration order. */
export function enabledExporters(exporters: ExportersConfig): string[] {
  return [
    ...exporters.search_index.filter((e) => e.enabled).map((e) => exporterSinkName("search_index", e.name)),
    ...exporters.otel.filter((e) => e.enabled).map((e) => exporterSinkName("otel", e.name)),
    ...exporters.siem.filter((e) => e.enabled).map((e) => exporterSinkName("siem", e.name)),
  ];
}
