// The configuration's enabled exporters as audit sinks. Rebuilt on every config reload: an exporter whose settings did
// not change keeps its sink object (its clients and connections), so the audit log only swaps what was edited, adds
// what is new and removes what is gone (audit-log.ts, setSinks). An otel exporter is an audit sink only with
// `export_logs`; its metrics and traces are telemetry, not audit events.
//
// Each exporter's client library (Elasticsearch, the OTLP exporters and gRPC, Azure) is imported only when an exporter
// of that type is configured: a gateway without exporters does not carry them in memory. `load` imports what a
// configuration needs; the gateway awaits it before building the sinks at start, so a bad exporter config fails the
// start as before. A reload that adds a type not loaded yet gets a sink that imports its module on its first write.
import type { ExportersConfig } from "../../config/schema.ts";
import type { ChainedAuditEvent } from "../audit-event.ts";
import type { AuditSink } from "../sink.ts";

type SearchIndexModule = typeof import("./search-index-sink.ts");
type OtelLogsModule = typeof import("./otel-logs-sink.ts");
type SiemModule = typeof import("./siem-sink.ts");

interface Modules {
  searchIndex?: SearchIndexModule;
  otelLogs?: OtelLogsModule;
  siem?: SiemModule;
}

const modules: Modules = {};

const importers = {
  searchIndex: async () => {
    modules.searchIndex ??= await import("./search-index-sink.ts");
    return modules.searchIndex;
  },
  otelLogs: async () => {
    modules.otelLogs ??= await import("./otel-logs-sink.ts");
    return modules.otelLogs;
  },
  siem: async () => {
    modules.siem ??= await import("./siem-sink.ts");
    return modules.siem;
  },
};

const enabledSearchIndexes = (exporters: ExportersConfig) =>
  exporters.search_index.filter((config) => config.enabled);
const enabledOtelLogs = (exporters: ExportersConfig) =>
  exporters.otel.filter((config) => config.enabled && config.export_logs);
const enabledSiems = (exporters: ExportersConfig) => exporters.siem.filter((config) => config.enabled);

/** Imports the sink modules the enabled exporters of this configuration need (none without exporters). */
export async function loadExporterModules(exporters: ExportersConfig): Promise<void> {
  await Promise.all([
    enabledSearchIndexes(exporters).length > 0 ? importers.searchIndex() : undefined,
    enabledOtelLogs(exporters).length > 0 ? importers.otelLogs() : undefined,
    enabledSiems(exporters).length > 0 ? importers.siem() : undefined,
  ]);
}

/** Builds the sink now when its module is loaded; else a sink that imports the module and builds on first use. */
function sinkFrom<M>(
  name: string,
  loaded: M | undefined,
  load: () => Promise<M>,
  build: (module: M) => AuditSink,
): AuditSink {
  if (loaded !== undefined) return build(loaded);
  let sink: Promise<AuditSink> | undefined;
  const built = () => {
    sink ??= load().then(build);
    return sink;
  };
  return {
    name,
    write: async (batch: readonly ChainedAuditEvent[]) => (await built()).write(batch),
    close: async () => {
      if (sink !== undefined) await (await sink).close?.();
    },
  };
}

export class ExporterSinks {
  /** By sink name: the settings it was built from (compared as JSON, kept in memory only) and the sink. */
  #built = new Map<string, { settings: string; sink: AuditSink }>();

  /** The enabled exporters' sinks, reusing the previous sink of every exporter whose settings are unchanged. */
  sinksFor(exporters: ExportersConfig): AuditSink[] {
    const wanted: Array<{ name: string; settings: string; build: () => AuditSink }> = [
      ...enabledSearchIndexes(exporters).map((config) => {
        const name = `search_index:${config.name}`;
        return {
          name,
          settings: JSON.stringify(config),
          build: () =>
            sinkFrom(name, modules.searchIndex, importers.searchIndex, (m) => m.searchIndexSink(config)),
        };
      }),
      ...enabledOtelLogs(exporters).map((config) => {
        const name = `otel:${config.name}`;
        return {
          name,
          settings: JSON.stringify(config),
          build: () => sinkFrom(name, modules.otelLogs, importers.otelLogs, (m) => m.otelLogsSink(config)),
        };
      }),
      ...enabledSiems(exporters).map((config) => {
        const name = `siem:${config.name}`;
        return {
          name,
          settings: JSON.stringify(config),
          build: () => sinkFrom(name, modules.siem, importers.siem, (m) => m.siemSink(config)),
        };
      }),
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
