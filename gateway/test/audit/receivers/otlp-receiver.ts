// A loopback OTLP collector for one protocol (gRPC, HTTP/protobuf or HTTP/JSON) that decodes what the official
// exporters really send: protobuf with the OpenTelemetry project's published, compiled protos, JSON as the OTLP JSON
// encoding. It keeps log records (and the audit events they carry), metric points and spans, the request headers,
// and can be told to fail, or go down and come back on the same port, for fault tests. With `deferDecoding` (the bench)
// an HTTP body is only kept and answered as accepted, and decodeDeferred() decodes it later, out of the measured time.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import * as grpc from "@grpc/grpc-js";
import protos from "otlp-proto-messages/build/src/generated/root.js";
import type { ChainedAuditEvent } from "../../../src/audit/audit-event.ts";

export type OtlpProtocol = "grpc" | "http/protobuf" | "http/json";
type Signal = "logs" | "metrics" | "traces";

/** The bound on one request body: far above a batch of audit events, small enough for a test process. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

type Attributes = Record<string, unknown>;

export interface ReceivedLogRecord {
  resource: Attributes;
  scope: string;
  timeUnixNano: string;
  severityNumber: number;
  severityText: string;
  body: unknown;
  eventName: string;
  attributes: Attributes;
}

export interface ReceivedMetricPoint {
  resource: Attributes;
  name: string;
  attributes: Attributes;
  /** Sum and gauge points: the value; histograms: the count. */
  value: number;
}

export interface ReceivedSpan {
  resource: Attributes;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
  attributes: Attributes;
  events: { name: string; attributes: Attributes }[];
  status: { code: number; message: string };
}

export interface ReceivedRequest {
  signal: Signal;
  headers: Record<string, string>;
}

// ---- decoding ----------------------------------------------------------------------------------------------------

interface ProtoMessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): unknown;
}

/** A message type of the published OTLP collector protos: `opentelemetry.proto.collector.<package>.v1.<name>`. */
function messageType(pkg: "logs" | "metrics" | "trace", name: string): ProtoMessageType {
  const root = protos as unknown as Record<string, Record<string, Record<string, unknown>>>;
  const collector = root.opentelemetry?.proto?.collector as Record<
    string,
    { v1: Record<string, ProtoMessageType> }
  >;
  const type = collector?.[pkg]?.v1[name];
  if (type === undefined) throw new Error(`the OTLP protos have no ${pkg}.v1.${name}`);
  return type;
}

const REQUEST_TYPES: Record<Signal, ProtoMessageType> = {
  logs: messageType("logs", "ExportLogsServiceRequest"),
  metrics: messageType("metrics", "ExportMetricsServiceRequest"),
  traces: messageType("trace", "ExportTraceServiceRequest"),
};
const RESPONSE_TYPES: Record<Signal, ProtoMessageType> = {
  logs: messageType("logs", "ExportLogsServiceResponse"),
  metrics: messageType("metrics", "ExportMetricsServiceResponse"),
  traces: messageType("trace", "ExportTraceServiceResponse"),
};
const GRPC_PATHS: Record<Signal, string> = {
  logs: "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
  metrics: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
  traces: "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
};

/** Protobuf payload → the same plain shape as the OTLP JSON encoding (ids as hex, 64-bit ints as strings). */
function decodeProtobuf(signal: Signal, bytes: Uint8Array): Record<string, unknown> {
  const type = REQUEST_TYPES[signal];
  const object = type.toObject(type.decode(bytes), {
    longs: String,
    bytes: String,
    enums: Number,
    defaults: false,
  });
  return hexIds(object) as Record<string, unknown>;
}

function hexIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIds);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      (key === "traceId" || key === "spanId" || key === "parentSpanId") && typeof inner === "string"
        ? Buffer.from(inner, "base64").toString("hex")
        : hexIds(inner);
  }
  return out;
}

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

function anyValue(value: unknown): unknown {
  if (value === null || typeof value !== "object") return undefined;
  const v = value as Json;
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return list((v.arrayValue as Json).values).map(anyValue);
  if ("kvlistValue" in v) return attributesOf((v.kvlistValue as Json).values);
  if ("bytesValue" in v) return v.bytesValue;
  return undefined;
}

function attributesOf(keyValues: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of list(keyValues)) out[String(kv.key)] = anyValue(kv.value);
  return out;
}

const text = (value: unknown): string => (value === undefined || value === null ? "" : String(value));

function logRecordsOf(request: Json): ReceivedLogRecord[] {
  const out: ReceivedLogRecord[] = [];
  for (const resourceLogs of list(request.resourceLogs)) {
    const resource = attributesOf((resourceLogs.resource as Json | undefined)?.attributes);
    for (const scopeLogs of list(resourceLogs.scopeLogs)) {
      const scope = text((scopeLogs.scope as Json | undefined)?.name);
      for (const record of list(scopeLogs.logRecords)) {
        out.push({
          resource,
          scope,
          timeUnixNano: text(record.timeUnixNano),
          severityNumber: Number(record.severityNumber ?? 0),
          severityText: text(record.severityText),
          body: anyValue(record.body),
          eventName: text(record.eventName),
          attributes: attributesOf(record.attributes),
        });
      }
    }
  }
  return out;
}

function metricPointsOf(request: Json): ReceivedMetricPoint[] {
  const out: ReceivedMetricPoint[] = [];
  for (const resourceMetrics of list(request.resourceMetrics)) {
    const resource = attributesOf((resourceMetrics.resource as Json | undefined)?.attributes);
    for (const scopeMetrics of list(resourceMetrics.scopeMetrics)) {
      for (const metric of list(scopeMetrics.metrics)) {
        const data = (metric.sum ?? metric.gauge ?? metric.histogram) as Json | undefined;
        for (const point of list(data?.dataPoints)) {
          const value = point.asDouble ?? point.asInt ?? point.count ?? 0;
          out.push({
            resource,
            name: text(metric.name),
            attributes: attributesOf(point.attributes),
            value: Number(value),
          });
        }
      }
    }
  }
  return out;
}

function spansOf(request: Json): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of list(request.resourceSpans)) {
    const resource = attributesOf((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scopeSpans of list(resourceSpans.scopeSpans)) {
      for (const span of list(scopeSpans.spans)) {
        const status = (span.status ?? {}) as Json;
        out.push({
          resource,
          name: text(span.name),
          traceId: text(span.traceId).toLowerCase(),
          spanId: text(span.spanId).toLowerCase(),
          parentSpanId: text(span.parentSpanId).toLowerCase(),
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          events: list(span.events).map((event) => ({
            name: text(event.name),
            attributes: attributesOf(event.attributes),
          })),
          status: { code: Number(status.code ?? 0), message: text(status.message) },
        });
      }
    }
  }
  return out;
}

/** The audit event a log record carries in its `svc.audit.*` attributes; absent fields are null as in the schema. */
export function auditEventOf(record: ReceivedLogRecord): ChainedAuditEvent {
  const field = (name: string): unknown => record.attributes[`svc.audit.${name}`] ?? null;
  return {
    time: field("time"),
    kind: field("kind"),
    request_id: field("request_id"),
    gateway: field("gateway"),
    source: field("source"),
    server: field("server"),
    method: field("method"),
    capability: field("capability"),
    subject: field("subject"),
    provider: field("provider"),
    groups: (record.attributes["svc.audit.groups"] as string[] | undefined) ?? [],
    decision: field("decision"),
    reason: field("reason"),
    status: field("status"),
    latency_ms: field("latency_ms"),
    count: field("count"),
    instance: field("instance"),
    seq: field("seq"),
    prev_hash: field("prev_hash"),
    hash: field("hash"),
  } as ChainedAuditEvent;
}

// ---- failures ----------------------------------------------------------------------------------------------------

interface PlannedFailure {
  status: number;
  retryAfter: string | undefined;
}

/** The gRPC status an OTLP/gRPC collector answers where an HTTP one answers `status` (OTLP spec's mapping). */
function grpcStatusFor(httpStatus: number): grpc.status {
  if (httpStatus === 429) return grpc.status.RESOURCE_EXHAUSTED;
  if (httpStatus === 502 || httpStatus === 503 || httpStatus === 504) return grpc.status.UNAVAILABLE;
  if (httpStatus === 400) return grpc.status.INVALID_ARGUMENT;
  if (httpStatus === 401) return grpc.status.UNAUTHENTICATED;
  if (httpStatus === 403) return grpc.status.PERMISSION_DENIED;
  return grpc.status.INTERNAL;
}

// ---- the receiver ------------------------------------------------------------------------------------------------

export class OtlpReceiver {
  readonly protocol: OtlpProtocol;
  /** Audit events from the log records, in arrival order. */
  readonly received: ChainedAuditEvent[] = [];
  readonly logRecords: ReceivedLogRecord[] = [];
  readonly metricPoints: ReceivedMetricPoint[] = [];
  readonly spans: ReceivedSpan[] = [];
  readonly requests: ReceivedRequest[] = [];
  /** Requests answered with a planned failure. */
  failed = 0;
  /**
   * HTTP bodies of the expected content type are kept as they came and answered as a full success, costing the
   * sender's machine only the read; decodeDeferred() decodes and keeps them as the normal path would. A planned
   * failure or rejection pending is answered as usual.
   */
  deferDecoding = false;
  /** Bodies that did not decode in decodeDeferred(), after they were answered as accepted. */
  readonly decodeErrors: string[] = [];
  readonly #deferred: { signal: Signal; headers: Record<string, string>; body: Buffer; gzip: boolean }[] = [];

  #port = 0;
  #http: Server | undefined;
  #grpc: grpc.Server | undefined;
  readonly #failures: PlannedFailure[] = [];
  /** Log records to reject (drop, with an OTLP partial success) in each of the next logs requests. */
  readonly #rejections: number[] = [];

  private constructor(protocol: OtlpProtocol) {
    this.protocol = protocol;
  }

  static async start(protocol: OtlpProtocol): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver(protocol);
    await receiver.up();
    return receiver;
  }

  /** The base endpoint to configure as `exporters.otel[].endpoint`. */
  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** The next `count` requests are answered with `status` (gRPC: the matching status code), then normal again. */
  failNext(count: number, status: number, retryAfterSeconds?: number): void {
    for (let i = 0; i < count; i++) {
      this.#failures.push({
        status,
        retryAfter: retryAfterSeconds === undefined ? undefined : String(retryAfterSeconds),
      });
    }
  }

  /**
   * The next logs request is accepted in part: its last `records` log records are dropped and the answer is an OTLP
   * partial success saying how many were rejected (which ones, OTLP does not say).
   */
  rejectNext(records: number): void {
    this.#rejections.push(records);
  }

  /** Accepts requests (again) on the same port. */
  async up(): Promise<void> {
    if (this.#http !== undefined || this.#grpc !== undefined) return;
    if (this.protocol === "grpc") await this.#startGrpc();
    else await this.#startHttp();
  }

  /** Stops accepting: connections are refused until up(). */
  async down(): Promise<void> {
    const http = this.#http;
    const server = this.#grpc;
    this.#http = undefined;
    this.#grpc = undefined;
    if (http !== undefined) {
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      http.closeAllConnections();
      await closed;
    }
    server?.forceShutdown();
  }

  close(): Promise<void> {
    return this.down();
  }

  /** Keeps what a request carries; returns the answer's fields (a partial success, or none). */
  #accept(signal: Signal, headers: Record<string, string>, request: Json): Json {
    this.requests.push({ signal, headers });
    if (signal === "logs") {
      const records = logRecordsOf(request);
      const rejected = Math.min(this.#rejections.shift() ?? 0, records.length);
      for (const record of records.slice(0, records.length - rejected)) {
        this.logRecords.push(record);
        this.received.push(auditEventOf(record));
      }
      if (rejected > 0) {
        return {
          partialSuccess: { rejectedLogRecords: rejected, errorMessage: `${rejected} records rejected` },
        };
      }
    } else if (signal === "metrics") {
      this.metricPoints.push(...metricPointsOf(request));
    } else {
      this.spans.push(...spansOf(request));
    }
    return {};
  }

  async #startHttp(): Promise<void> {
    const server = createServer((req, res) => {
      this.#handleHttp(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(error instanceof Error ? error.message : String(error));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.#port, "127.0.0.1", () => resolve());
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#http = server;
  }

  async #handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const signal = (["logs", "metrics", "traces"] as const).find((s) => req.url === `/v1/${s}`);
    if (req.method !== "POST" || signal === undefined) {
      res.writeHead(404).end(`no OTLP endpoint at ${req.method} ${req.url}`);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end("body too large");
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    const gzip = req.headers["content-encoding"] === "gzip";
    const deferred =
      this.deferDecoding &&
      this.#failures.length === 0 &&
      (signal !== "logs" || this.#rejections.length === 0);
    const body = gzip && !deferred ? gunzipSync(raw) : raw;

    const failure = this.#failures.shift();
    if (failure !== undefined) {
      this.failed++;
      res.writeHead(
        failure.status,
        failure.retryAfter === undefined ? {} : { "retry-after": failure.retryAfter },
      );
      res.end();
      return;
    }

    const contentType = String(req.headers["content-type"] ?? "");
    const expected = this.protocol === "http/json" ? "application/json" : "application/x-protobuf";
    if (!contentType.startsWith(expected)) {
      res.writeHead(415).end(`expected ${expected}, got ${contentType}`);
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === "string") headers[name] = value;
    const answer = deferred ? {} : this.#accept(signal, headers, this.#decodeHttp(signal, body));
    if (deferred) this.#deferred.push({ signal, headers, body, gzip });

    if (this.protocol === "http/json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
    } else {
      const type = RESPONSE_TYPES[signal];
      res
        .writeHead(200, { "content-type": "application/x-protobuf" })
        .end(type.encode(type.fromObject(answer)).finish());
    }
  }

  #decodeHttp(signal: Signal, body: Buffer): Json {
    return this.protocol === "http/json"
      ? (JSON.parse(body.toString("utf8")) as Json)
      : decodeProtobuf(signal, body);
  }

  /** Decodes and keeps the bodies kept by `deferDecoding`; one that does not decode goes to decodeErrors. */
  decodeDeferred(): void {
    for (const { signal, headers, body, gzip } of this.#deferred.splice(0)) {
      try {
        this.#accept(signal, headers, this.#decodeHttp(signal, gzip ? gunzipSync(body) : body));
      } catch (error) {
        this.decodeErrors.push(`${signal} body answered as accepted does not decode: ${String(error)}`);
      }
    }
  }

  async #startGrpc(): Promise<void> {
    const server = new grpc.Server();
    for (const signal of ["logs", "metrics", "traces"] as const) {
      const definition: grpc.ServiceDefinition = {
        Export: {
          path: GRPC_PATHS[signal],
          requestStream: false,
          responseStream: false,
          requestSerialize: (bytes: Buffer) => bytes,
          requestDeserialize: (bytes: Buffer) => bytes,
          responseSerialize: (message: unknown) =>
            Buffer.from(RESPONSE_TYPES[signal].encode(message).finish()),
          responseDeserialize: (bytes: Buffer) => RESPONSE_TYPES[signal].decode(bytes),
        },
      };
      server.addService(definition, {
        Export: (call: grpc.ServerUnaryCall<Buffer, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          const failure = this.#failures.shift();
          if (failure !== undefined) {
            this.failed++;
            callback({ code: grpcStatusFor(failure.status), details: `planned failure ${failure.status}` });
            return;
          }
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(call.metadata.getMap())) headers[name] = String(value);
          const answer = this.#accept(signal, headers, decodeProtobuf(signal, call.request));
          callback(null, RESPONSE_TYPES[signal].fromObject(answer));
        },
      });
    }
    const port = await new Promise<number>((resolve, reject) => {
      server.bindAsync(`127.0.0.1:${this.#port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    this.#port = port;
    this.#grpc = server;
  }
}
