// The gateway's own telemetry over OTLP, from `exporters.otel`: metrics (export_metrics) and request traces
// (export_traces) of every enabled exporter. Audit logs (export_logs) are an audit sink instead
// (audit/exporters/otel-logs-sink.ts), delivered by the audit log's queue like the other sinks.
import type { GatewayMetrics } from "../runtime/metrics.ts";
import { type OtelMetrics, startOtelMetrics } from "./otel-metrics.ts";
import { type RequestTracer, startOtelTraces } from "./otel-traces.ts";
import type { OtelExporterConfig } from "./otlp-exporters.ts";

export interface Telemetry {
  /** Undefined when no exporter has export_traces: the request path then does no tracing work at all. */
  tracer: RequestTracer | undefined;
  /** Pushes what is buffered (last metrics, unsent spans) and stops. */
  shutdown(): Promise<void>;
}

export function startTelemetry(
  exporters: readonly OtelExporterConfig[],
  metrics: GatewayMetrics,
  options: { metricsIntervalMs?: number } = {},
): Telemetry {
  const enabled = exporters.filter((exporter) => exporter.enabled);
  const pushers: OtelMetrics[] = enabled
    .filter((exporter) => exporter.export_metrics)
    .map((exporter) => startOtelMetrics(exporter, metrics, { intervalMs: options.metricsIntervalMs }));
  const tracing = enabled.filter((exporter) => exporter.export_traces);
  const traces = tracing.length > 0 ? startOtelTraces(tracing) : undefined;
  return {
    tracer: traces?.tracer,
    shutdown: async () => {
      await Promise.allSettled([...pushers.map((pusher) => pusher.shutdown()), traces?.shutdown()]);
    },
  };
}
