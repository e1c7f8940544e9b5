// The configuration's enabled exporters as audit sinks. Rebuilt on every config reload: an exporter whose settings did
// not change keeps its sink object (its clients and connections), so the audit log only swaps what was edited, adds
// what is new and removes what is gone (audit-log.ts, setSinks). An otel exporter is an audit sink only with
// `export_logs`; its metrics and traces are telemetry, not audit events.
//
// Each exporter's client library (Elasticsearch, the OTLP exporters and gRPC, Azure) is imported only when an exporter
// of that type is configured: a gateway without exporters does not carry them in memory. Where the sinks are built is
// the caller's choice: in this process (`buildExporterSink`, tests and tools) or in the export process
// (export-process.ts), which is where the gateway runs them.
import type { ExportersConfig } from "../../config/schema.ts";
import type { ChainedAuditEvent } from "../audit-event.ts";
import type { AuditSink } from "../sink.ts";
import { exporterSinkName } from "./enabled.ts";

type SearchIndexModule = typeof import("./search-index-sink.ts");
type OtelLogsModule = typeof import("./otel-logs-sink.ts");
type SiemModule = typeof import("./siem-sink.ts");

/** One enabled exporter: what it takes to build its sink, in whichever process does it (plain data, so it can be sent). */
export type ExporterSpec =
  | { kind: "search_index"; name: string; config: ExportersConfig["search_index"][number] }
  | { kind: "otel"; name: string; config: ExportersConfig["otel"][number] }
  | { kind: "siem"; name: string; config: ExportersConfig["siem"][number] };

interface Modules {
  search_index?: SearchIndexModule;
  otel?: OtelLogsModule;
  siem?: SiemModule;
}

const modules: Modules = {};

const importers = {
  search_index: async () => {
    modules.search_index ??= await import("./search-index-sink.ts");
    return modules.search_index;
  },
  otel: async () => {
    modules.otel ??= await import("./otel-logs-sink.ts");
    return modules.otel;
  },
  siem: async () => {
    modules.siem ??= await import("./siem-sink.ts");
    return modules.siem;
  },
};

/** The enabled exporters of a configuration that are audit sinks, named as their sinks are (`<type>:<name>`). */
export function exporterSpecs(exporters: ExportersConfig): ExporterSpec[] {
  return [
    ...exporters.search_index
      .filter((config) => config.enabled)
      .map((config) => ({
        kind: "search_index" as const,
        name: exporterSinkName("search_index", config.name),
        config,
      })),
    ...exporters.otel
      .filter((config) => config.enabled && config.export_logs)
      .map((config) => ({ kind: "otel" as const, name: exporterSinkName("otel", config.name), config })),
    ...exporters.siem
      .filter((config) => config.enabled)
      .map((config) => ({ kind: "siem" as const, name: exporterSinkName("siem", config.name), config })),
  ];
}

/** Imports the sink modules the enabled exporters of this configuration need (none without exporters). */
export async function loadExporterModules(exporters: ExportersConfig): Promise<void> {
  const kinds = new Set(exporterSpecs(exporters).map((spec) => spec.kind));
  await Promise.all([...kinds].map((kind) => importers[kind]()));
}

function buildWith(spec: ExporterSpec, loaded: Modules): AuditSink | undefined {
  switch (spec.kind) {
    case "search_index":
      return loaded.search_index?.searchIndexSink(spec.config);
    case "otel":
      return loaded.otel?.otelLogsSink(spec.config);
    case "siem":
      return loaded.siem?.siemSink(spec.config);
  }
}

/**
 * The spec's sink, built now when its module is loaded (so a bad setting throws here); else a sink that imports the
 * module and builds on its first write (a reload that adds a type not loaded yet).
 */
export function buildExporterSink(spec: ExporterSpec): AuditSink {
  const now = buildWith(spec, modules);
  if (now !== undefined) return now;
  let sink: Promise<AuditSink> | undefined;
  const built = () => {
    sink ??= importers[spec.kind]().then(() => buildWith(spec, modules) as AuditSink);
    return sink;
  };
  return {
    name: spec.name,
    write: async (batch: readonly ChainedAuditEvent[]) => (await built()).write(batch),
    close: async () => {
      if (sink !== undefined) await (await sink).close?.();
    },
  };
}

/** Imports the spec's module first, so a bad setting fails here rather than at the first write. */
export async function buildExporterSinkNow(spec: ExporterSpec): Promise<AuditSink> {
  await importers[spec.kind]();
  return buildExporterSink(spec);
}

export class ExporterSinks {
  /** By sink name: the settings it was built from (compared as JSON, kept in memory only) and the sink. */
  #built = new Map<string, { settings: string; sink: AuditSink }>();
  readonly #build: (spec: ExporterSpec) => AuditSink;

  /** `build`: where a new or edited exporter's sink is made (default: in this process). */
  constructor(build: (spec: ExporterSpec) => AuditSink = buildExporterSink) {
    this.#build = build;
  }

  /** The enabled exporters' sinks, reusing the previous sink of every exporter whose settings are unchanged. */
  sinksFor(exporters: ExportersConfig): AuditSink[] {
    const next = new Map<string, { settings: string; sink: AuditSink }>();
    for (const spec of exporterSpecs(exporters)) {
      const settings = JSON.stringify(spec.config);
      const previous = this.#built.get(spec.name);
      next.set(spec.name, previous?.settings === settings ? previous : { settings, sink: this.#build(spec) });
    }
    this.#built = next;
    return [...next.values()].map((entry) => entry.sink);
  }
}
