// The gateway's metrics pushed to an OTLP collector at a fixed interval. The values are the ones /metrics shows:
// a MetricProducer reads GatewayMetrics.snapshot() at each collection, so there is one set of counters, not a second
// one kept for OpenTelemetry. (The metrics API has no asynchronous histogram, and a producer hands the SDK the
// latency histogram as it is, with the Prometheus bucket bounds.) Counters go out as cumulative monotonic sums.
import { type HrTime, ValueType } from "@opentelemetry/api";
import { millisToHrTime } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AggregationTemporality,
  type CollectionResult,
  DataPointType,
  MeterProvider,
  type MetricData,
  type MetricProducer,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import { type OtelExporterConfig, otlpMetricExporter } from "./otlp-exporters.ts";

/** How often metrics are pushed when the caller does not say: OpenTelemetry's own default. */
export const DEFAULT_METRICS_INTERVAL_MS = 60_000;

const SCOPE = { name: "svc-gateway" };

function metricDataOf(metrics: GatewayMetrics, startTime: HrTime): MetricData[] {
  const endTime = millisToHrTime(Date.now());
  const { scalars, histograms } = metrics.snapshot();
  const out: MetricData[] = [];
  for (const family of scalars) {
    const descriptor = { name: family.name, description: family.help, unit: "", valueType: ValueType.DOUBLE };
    const dataPoints = family.series.map((series) => ({
      startTime,
      endTime,
      attributes: series.labels,
      value: series.value,
    }));
    if (family.type === "counter") {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints,
      });
    } else {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints,
      });
    }
  }
  for (const family of histograms) {
    out.push({
      descriptor: { name: family.name, description: family.help, unit: "s", valueType: ValueType.DOUBLE },
      aggregationTemporality: AggregationTemporality.CUMULATIVE,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: family.series.map((series) => ({
        startTime,
        endTime,
        attributes: series.labels,
        value: {
          buckets: { boundaries: [...family.boundaries], counts: series.bucketCounts },
          sum: series.sum,
          count: series.count,
          hasMinMax: false,
        },
      })),
    });
  }
  return out;
}

function gatewayMetricsProducer(metrics: GatewayMetrics): MetricProducer {
  // Cumulative series count from when the counters were created: the start of this process.
  const startTime = millisToHrTime(Date.now() - process.uptime() * 1000);
  return {
    collect(): Promise<CollectionResult> {
      return Promise.resolve({
        resourceMetrics: {
          resource: resourceFromAttributes({}),
          scopeMetrics: [{ scope: SCOPE, metrics: metricDataOf(metrics, startTime) }],
        },
        errors: [],
      });
    },
  };
}

export interface OtelMetrics {
  /** Pushes the last values and stops the schedule. */
  shutdown(): Promise<void>;
}

export function startOtelMetrics(
  config: OtelExporterConfig,
  metrics: GatewayMetrics,
  options: { intervalMs?: number } = {},
): OtelMetrics {
  const intervalMs = options.intervalMs ?? DEFAULT_METRICS_INTERVAL_MS;
  const reader = new PeriodicExportingMetricReader({
    exporter: otlpMetricExporter(config),
    exportIntervalMillis: intervalMs,
    // The SDK refuses a timeout longer than the interval.
    exportTimeoutMillis: Math.min(config.timeout * 1000, intervalMs),
    metricProducers: [gatewayMetricsProducer(metrics)],
  });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ "service.name": config.service_name }),
    readers: [reader],
  });
  return { shutdown: () => provider.shutdown() };
}
