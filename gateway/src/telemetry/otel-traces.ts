// A span per request on `/{server}/mcp`, exported over OTLP. The client's W3C trace context (traceparent,
// tracestate) is the span's parent, and the upstream receives the gateway's span as its parent in turn, so one trace
// runs client → gateway → upstream. The pipeline steps are span events. The principal's subject is left out on
// purpose: traces usually reach more people than the audit trail does, and a hash of an e-mail address is easily
// reversed; the request id (`svc.request_id`) joins a span to its audit events, which carry the subject.
import type { IncomingHttpHeaders } from "node:http";
import {
  type Attributes,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { type OtelExporterConfig, otlpTraceExporter } from "./otlp-exporters.ts";

const propagator = new W3CTraceContextPropagator();

/** What the pipeline knows about a request when it ends, for the span's attributes. */
export interface RequestOutcome {
  requestId: string;
  /** The configured server name, "" when the request never got routed. */
  server: string;
  /** The bounded method label of the metrics (runtime/metrics.ts methodLabel). */
  method: string;
  status: number;
  /** The identity provider's configured name, when the caller was authenticated. */
  provider: string | undefined;
  /** The gateway error code that answered the request, if one did. */
  errorCode: string | undefined;
}

/** One request's span, as the pipeline sees it. */
export interface RequestSpan {
  /** A pipeline step finished (e.g. `authenticated`, `forwarded`). */
  event(name: string, attributes?: Attributes): void;
  /** traceparent (and tracestate) naming this span as the parent, for the upstream request. */
  upstreamHeaders(): Record<string, string>;
  end(outcome: RequestOutcome): void;
}

export interface RequestTracer {
  startRequest(httpMethod: string, headers: IncomingHttpHeaders): RequestSpan;
}

class OtelRequestSpan implements RequestSpan {
  readonly #span: Span;

  constructor(span: Span) {
    this.#span = span;
  }

  event(name: string, attributes?: Attributes): void {
    this.#span.addEvent(name, attributes);
  }

  upstreamHeaders(): Record<string, string> {
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(ROOT_CONTEXT, this.#span), carrier, defaultTextMapSetter);
    return carrier;
  }

  end(outcome: RequestOutcome): void {
    const span = this.#span;
    // Span name: method and server, both bounded (configured names, known methods), as the MCP conventions name it.
    span.updateName(outcome.server === "" ? outcome.method : `${outcome.method} ${outcome.server}`);
    span.setAttribute("svc.request_id", outcome.requestId);
    span.setAttribute("mcp.method.name", outcome.method);
    span.setAttribute("http.response.status_code", outcome.status);
    if (outcome.server !== "") span.setAttribute("svc.server", outcome.server);
    if (outcome.provider !== undefined) span.setAttribute("svc.identity_provider", outcome.provider);
    if (outcome.errorCode !== undefined) span.setAttribute("error.type", outcome.errorCode);
    // A server span is an error only when the gateway or the upstream failed; a refused client is not one.
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.errorCode });
    span.end();
  }
}

class OtelRequestTracer implements RequestTracer {
  readonly #tracer: Tracer;

  constructor(tracer: Tracer) {
    this.#tracer = tracer;
  }

  startRequest(httpMethod: string, headers: IncomingHttpHeaders): RequestSpan {
    const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(
      httpMethod,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": httpMethod } },
      parent,
    );
    return new OtelRequestSpan(span);
  }
}

export interface OtelTraces {
  tracer: RequestTracer;
  /** Exports the spans still buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * One tracer for the whole gateway, whose spans go to every exporter in `configs` (each with its own endpoint,
 * headers and timeout). A span has one resource, so `service.name` is the first exporter's `service_name`.
 */
export function startOtelTraces(configs: readonly OtelExporterConfig[]): OtelTraces {
  const first = configs[0];
  if (first === undefined) throw new Error("startOtelTraces needs at least one exporter");
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": first.service_name }),
    spanProcessors: configs.map(
      (config) =>
        new BatchSpanProcessor(otlpTraceExporter(config), { exportTimeoutMillis: config.timeout * 1000 }),
    ),
  });
  return {
    tracer: new OtelRequestTracer(provider.getTracer("svc-gateway")),
    shutdown: () => provider.shutdown(),
  };
}
