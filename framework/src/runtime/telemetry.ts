import {
  type Attributes,
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Settings } from "../project/settings.ts";
import { serializeForTrace } from "./serialize.ts";

/** Spans per the OpenTelemetry MCP semantic conventions; a no-op object when tracing is off. */
export interface Telemetry {
  enabled: boolean;
  /** detailed_tracing: record inputs and outputs (serialized, size-limited). */
  detailed: boolean;
  /** `carrier`: the request's `params._meta`, whose `traceparent`/`tracestate` make the caller's span the parent. */
  span<T>(
    name: string,
    kind: "server" | "client",
    attributes: Attributes,
    run: (span: Span) => Promise<T>,
    carrier?: Record<string, unknown>,
  ): Promise<T>;
  /** Outgoing `_meta` with the active span's `traceparent` (semantic conventions: context propagation). */
  inject(meta: Record<string, unknown> | undefined): Record<string, unknown> | undefined;
  /** Adds a serialized value as an attribute when detailed tracing is on. */
  detail(span: Span, key: string, value: unknown): void;
  shutdown(): Promise<void>;
}

/** Tracing off: one shared non-recording span (all its methods are no-ops), nothing allocated per call. */
const noopSpan = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const disabled: Telemetry = {
  enabled: false,
  detailed: false,
  span: (_name, _kind, _attributes, run) => run(noopSpan),
  inject: (meta) => meta,
  detail: () => {},
  shutdown: async () => {},
};

function createTelemetry(tracer: Tracer, detailed: boolean, shutdown: () => Promise<void>): Telemetry {
  return {
    enabled: true,
    detailed,
    span(name, kind, attributes, run, carrier) {
      const spanKind = kind === "server" ? SpanKind.SERVER : SpanKind.CLIENT;
      const parent = carrier ? propagation.extract(context.active(), carrier) : context.active();
      return tracer.startActiveSpan(name, { kind: spanKind, attributes }, parent, async (span) => {
        try {
          return await run(span);
        } catch (error) {
          span.recordException(error as Error);
          span.setAttribute("error.type", (error as Error).name || "Error");
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
    inject(meta) {
      const carrier: Record<string, unknown> = { ...meta };
      propagation.inject(context.active(), carrier);
      return carrier;
    },
    detail(span, key, value) {
      if (detailed) span.setAttribute(key, serializeForTrace(value));
    },
    shutdown,
  };
}

/**
 * Starts tracing when svc.json has opentelemetry_enabled: a Node tracer provider (AsyncLocalStorage context, W3C
 * trace context propagation) with one span processor. Only the trace SDK, not @opentelemetry/sdk-node, which
 * carries every exporter (gRPC, protobuf, metrics, logs) into the bundle. The OTLP HTTP exporter reads
 * OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS itself; OTEL_TRACES_EXPORTER=console (or
 * opentelemetry_default_exporter "console") prints spans instead. OTEL_SERVICE_NAME overrides svc.json name;
 * OTEL_RESOURCE_ATTRIBUTES adds resource attributes.
 */
export async function startTelemetry(
  settings: Settings,
  env: Record<string, string | undefined>,
  log: (message: string, fields?: Record<string, unknown>) => void,
): Promise<Telemetry> {
  if (!settings.opentelemetry_enabled) return disabled;
  const { NodeTracerProvider } = await import("@opentelemetry/sdk-trace-node");
  const { detectResources, envDetector, resourceFromAttributes } = await import("@opentelemetry/resources");
  const { BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor } = await import(
    "@opentelemetry/sdk-trace-base"
  );
  const useConsole =
    env.OTEL_TRACES_EXPORTER === "console" || settings.opentelemetry_default_exporter === "console";
  let processor: InstanceType<typeof BatchSpanProcessor> | InstanceType<typeof SimpleSpanProcessor>;
  if (useConsole) {
    processor = new SimpleSpanProcessor(new ConsoleSpanExporter());
  } else {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    processor = new BatchSpanProcessor(new OTLPTraceExporter());
  }
  const serviceName = env.OTEL_SERVICE_NAME || settings.name;
  const resource = detectResources({ detectors: [envDetector] }).merge(
    resourceFromAttributes({ "service.name": serviceName }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  log("tracing enabled", {
    exporter: useConsole ? "console" : "otlp_http",
    endpoint: useConsole ? undefined : (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://localhost:4318 (default)"),
    service: serviceName,
    detailed_tracing: settings.detailed_tracing,
  });
  return createTelemetry(trace.getTracer("svc"), settings.detailed_tracing, () => provider.shutdown());
}
