// The gateway's own telemetry over OTLP, from `exporters.otel`: metrics (export_metrics) and request traces
// (export_traces) of every enabled exporter. Audit logs (export_logs) are an audit sink instead
// (audit/exporters/otel-logs-sink.ts), delivered by the audit log's queue like the other sinks.
// The OpenTelemetry SDK and its OTLP exporters are imported only when an enabled exporter asks for metrics or traces
// (loadTelemetryModules, awaited before startTelemetry): a gateway without them does not carry them in memory.
import type { GatewayMetrics } from "../runtime/metrics.ts";
import type { OtelMetrics } from "./otel-metrics.ts";
import type { RequestTracer } from "./otel-traces.ts";
import type { OtelExporterConfig } from "./otlp-exporters.ts";

export interface Telemetry {
  /** Undefined when no exporter has export_traces: the request path then does no tracing work at all. */
  tracer: RequestTracer | undefined;
  /** Pushes what is buffered (last metrics, unsent spans) and stops. */
  shutdown(): Promise<void>;
}

let metricsModule: typeof import("./otel-metrics.ts") | undefined;
let tracesModule: typeof import("./otel-traces.ts") | undefined;

const wantsMetrics = (exporters: readonly OtelExporterConfig[]) =>
  exporters.some((exporter) => exporter.enabled && exporter.export_metrics);
const wantsTraces = (exporters: readonly OtelExporterConfig[]) =>
  exporters.some((exporter) => exporter.enabled && exporter.export_traces);

/** True when startTelemetry can run for these exporters without importing anything first. */
export function telemetryModulesLoaded(exporters: readonly OtelExporterConfig[]): boolean {
  return (
    (!wantsMetrics(exporters) || metricsModule !== undefined) &&
    (!wantsTraces(exporters) || tracesModule !== undefined)
  );
}

/** Imports the SDK parts these exporters need (nothing when none exports metrics or traces). */
export async function loadTelemetryModules(exporters: readonly OtelExporterConfig[]): Promise<void> {
  if (wantsMetrics(exporters)) metricsModule ??= await import("./otel-metrics.ts");
  if (wantsTraces(exporters)) tracesModule ??= await import("./otel-traces.ts");
}

export function startTelemetry(
  exporters: readonly OtelExporterConfig[],
  metrics: GatewayMetrics,
  options: { metricsIntervalMs?: number } = {},
): Telemetry {
  if (!telemetryModulesLoaded(exporters)) {
    throw new Error("startTelemetry: await loadTelemetryModules(exporters) first");
  }
  const enabled = exporters.filter((exporter) => exporter.enabled);
  const metricsPushing = enabled.filter((exporter) => exporter.export_metrics);
  const pushers: OtelMetrics[] =
    metricsModule === undefined
      ? []
      : metricsPushing.map((exporter) =>
          (metricsModule as typeof import("./otel-metrics.ts")).startOtelMetrics(exporter, metrics, {
            intervalMs: options.metricsIntervalMs,
          }),
        );
  const tracing = enabled.filter((exporter) => exporter.export_traces);
  const traces = tracing.length > 0 ? tracesModule?.startOtelTraces(tracing) : undefined;
  return {
    tracer: traces?.tracer,
    shutdown: async () => {
      await Promise.allSettled([...pushers.map((pusher) => pusher.shutdown()), traces?.shutdown()]);
    },
  };
}
