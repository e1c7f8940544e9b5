// The configuration's enabled exporters as audit sinks. Rebuilt on every config reload: an exporter whose settings did
// not change keeps its sink object (its clients and connections), so the audit log only swaps what was edited, adds
// what is new and removes what is gone (audit-log.ts, setSinks). An otel exporter is an audit sink only with
// `export_logs`; its metrics and traces are telemetry, not audit events.
import type { ExportersConfig } from "../../config/schema.ts";
import type { AuditSink } from "../sink.ts";
import { otelLogsSink } from "./otel-logs-sink.ts";
import { searchIndexSink } from "./search-index-sink.ts";
import { siemSink } from "./siem-sink.ts";

export class ExporterSinks {
  /** By sink name: the settings it was built from (compared as JSON, kept in memory only) and the sink. */
  #built = new Map<string, { settings: string; sink: AuditSink }>();

  /** The enabled exporters' sinks, reusing the previous sink of every exporter whose settings are unchanged. */
  sinksFor(exporters: ExportersConfig): AuditSink[] {
    const wanted: Array<{ name: string; settings: string; build: () => AuditSink }> = [
      ...exporters.search_index
        .filter((config) => config.enabled)
        .map((config) => ({
          name: `search_index:${config.name}`,
          settings: JSON.stringify(config),
          build: () => searchIndexSink(config),
        })),
      ...exporters.otel
        .filter((config) => config.enabled && config.export_logs)
        .map((config) => ({
          name: `otel:${config.name}`,
          settings: JSON.stringify(config),
          build: () => otelLogsSink(config),
        })),
      ...exporters.siem
        .filter((config) => config.enabled)
        .map((config) => ({
          name: `siem:${config.name}`,
          settings: JSON.stringify(config),
          build: () => siemSink(config),
        })),
    ];
    const next = new Map<string, { settings: string; sink: AuditSink }>();
    for (const { name, settings, build } of wanted) {
      const previous = this.#built.get(name);
      next.set(name, previous?.settings === settings ? previous : { settings, sink: build() });
    }
    this.#built = next;
    return [...next.values()].map((entry) => entry.sink);
  }
}
