// The official OTLP exporter for each signal and protocol, configured from one `exporters.otel` entry: the same
// endpoint, headers and timeout for logs, metrics and traces.
import { Metadata } from "@grpc/grpc-js";
import { OTLPLogExporter as GrpcLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
import { OTLPLogExporter as JsonLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { OTLPLogExporter as ProtobufLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
import { OTLPMetricExporter as GrpcMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as JsonMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPMetricExporter as ProtobufMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { OTLPTraceExporter as GrpcTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { z } from "zod";
import type { otelExporterSchema } from "../config/schema.ts";

export type OtelExporterConfig = z.output<typeof otelExporterSchema>;

type Signal = "logs" | "metrics" | "traces";

function endpointOf(config: OtelExporterConfig): string {
  // The schema makes `endpoint` required for an enabled exporter; a disabled one never reaches here.
  if (config.endpoint === undefined) throw new Error(`otel:${config.name}: endpoint is required`);
  return config.endpoint;
}

/**
 * `endpoint` is the collector's base URL (like OTEL_EXPORTER_OTLP_ENDPOINT): over HTTP each signal is posted to its
 * OTLP path under it (`/v1/logs`, `/v1/metrics`, `/v1/traces`); over gRPC the URL names the server, and its scheme
 * picks TLS (https) or plaintext (http).
 */
function httpOptions(config: OtelExporterConfig, signal: Signal) {
  const base = endpointOf(config).replace(/\/+$/, "");
  return {
    url: `${base}/v1/${signal}`,
    headers: { ...config.headers },
    timeoutMillis: config.timeout * 1000,
  };
}

function grpcOptions(config: OtelExporterConfig) {
  // gRPC carries the configured headers as call metadata, the equivalent of HTTP headers.
  const metadata = new Metadata();
  for (const [name, value] of Object.entries(config.headers)) metadata.set(name, value);
  return { url: endpointOf(config), metadata, timeoutMillis: config.timeout * 1000 };
}

export function otlpLogExporter(config: OtelExporterConfig): LogRecordExporter {
  switch (config.protocol) {
    case "grpc":
      return new GrpcLogExporter(grpcOptions(config));
    case "http/protobuf":
      return new ProtobufLogExporter(httpOptions(config, "logs"));
    case "http/json":
      return new JsonLogExporter(httpOptions(config, "logs"));
  }
}

export function otlpMetricExporter(config: OtelExporterConfig): PushMetricExporter {
  switch (config.protocol) {
    case "grpc":
      return new GrpcMetricExporter(grpcOptions(config));
    case "http/protobuf":
      return new ProtobufMetricExporter(httpOptions(config, "metrics"));
    case "http/json":
      return new JsonMetricExporter(httpOptions(config, "metrics"));
  }
}

export function otlpTraceExporter(config: OtelExporterConfig): SpanExporter {
  switch (config.protocol) {
    case "grpc":
      return new GrpcTraceExporter(grpcOptions(config));
    case "http/protobuf":
      return new ProtobufTraceExporter(httpOptions(config, "traces"));
    case "http/json":
      return new JsonTraceExporter(httpOptions(config, "traces"));
  }
}
