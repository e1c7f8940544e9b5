// Prometheus text exposition, hand-written and small: counters, one gauge family and one histogram, each
// keyed by a pre-joined label string so recording a request is a Map lookup and two additions. Two process
// gauges (resident memory, recent event-loop delay) are read only when scraped.
import type { SinkStatus } from "../audit/sink-queue.ts";
import { isClientMethod } from "../mcp/methods.ts";
import { EventLoopDelayWindow } from "./event-loop-delay.ts";

/** The event-loop delay gauge covers the current window and the previous one: a stall shows for 10 to 20 s. */
const EVENT_LOOP_WINDOW_MS = 10_000;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Label values besides the MCP methods a client sends (mcp/methods.ts): a batch, and the HTTP methods of requests
 * without a JSON-RPC body. Anything else is `other`, so clients cannot explode the label's cardinality.
 */
const LABEL_ONLY = new Set([
  "batch",
  "GET", // the notification stream
  "DELETE", // session end
]);

export function methodLabel(method: unknown): string {
  return typeof method === "string" && (isClientMethod(method) || LABEL_ONLY.has(method)) ? method : "other";
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labels(pairs: Record<string, string>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(pairs)) parts.push(`${name}="${escapeLabel(value)}"`);
  return parts.join(",");
}

/** The label pairs of a key built by labels(): its exact inverse, so exporters see the same names and values. */
export function parseLabels(key: string): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const match of key.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    pairs[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_, c: string) =>
      c === "n" ? "\n" : c,
    );
  }
  return pairs;
}

export interface SeriesSnapshot {
  /** The pre-joined label string /metrics prints ("" for none). */
  key: string;
  labels: Record<string, string>;
}

export interface ScalarFamily {
  name: string;
  type: "counter" | "gauge";
  help: string;
  series: (SeriesSnapshot & { value: number })[];
}

export interface HistogramFamily {
  name: string;
  help: string;
  /** Upper bounds of the buckets, ascending; one more bucket counts what lies above the last. */
  boundaries: readonly number[];
  /** Per bucket, not cumulative: boundaries.length + 1 counts. */
  series: (SeriesSnapshot & { bucketCounts: number[]; sum: number; count: number })[];
}

export interface MetricsSnapshot {
  scalars: ScalarFamily[];
  histograms: HistogramFamily[];
}

interface HistogramSeries {
  buckets: number[];
  sum: number;
  count: number;
}

/** A KV-backed check the gateway let through unchecked because the store was unreachable (fail open). */
export type UncheckedLimit = "rate_limit" | "replay" | "dpop" | "session";

export type UpstreamErrorKind =
  | "unreachable"
  | "timeout"
  | "status"
  | "stream_aborted"
  | "auth_required"
  | "forbidden"
  | "content_encoding"
  | "too_large";

/** Builds one scalar family from its series (snapshot() passes it to the helpers that add families). */
type ScalarBuilder = (
  name: string,
  type: "counter" | "gauge",
  help: string,
  series: Map<string, number>,
) => ScalarFamily;

export class GatewayMetrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, HistogramSeries>();
  readonly #upstreamErrors = new Map<string, number>();
  readonly #openStreams = new Map<string, number>();
  readonly #unchecked = new Map<string, number>();
  readonly #rateLimited = new Map<string, number>();
  readonly #piiReplacements = new Map<string, number>();
  readonly #firewallFindings = new Map<string, number>();
  readonly #groupSyncFallbacks = new Map<string, number>();
  readonly #controlPlaneDocuments = new Map<string, number>();
  readonly #reloads = new Map<string, number>([
    ['result="success"', 0],
    ['result="failure"', 0],
  ]);

  readonly #eventLoopDelay: EventLoopDelayWindow;
  readonly #eventLoopWindowMs: number;
  /** Read when scraped: the audit log keeps its own counters per sink. */
  #auditSinks: () => readonly SinkStatus[] = () => [];
  #exportsDeferred: () => boolean = () => false;

  constructor(options: { eventLoopWindowMs?: number } = {}) {
    this.#eventLoopWindowMs = options.eventLoopWindowMs ?? EVENT_LOOP_WINDOW_MS;
    this.#eventLoopDelay = new EventLoopDelayWindow(this.#eventLoopWindowMs);
  }

  /** Where the audit sink series come from (the gateway's AuditLog). */
  watchAuditSinks(source: () => readonly SinkStatus[]): void {
    this.#auditSinks = source;
  }

  /** Whether exports are waiting for the gateway's load to drop (audit/defer-under-load.ts), read when scraped. */
  watchExportDeferral(deferred: () => boolean): void {
    this.#exportsDeferred = deferred;
  }

  /** A request served with fallback groups because the provider's management API did not answer. */
  recordGroupSyncFallback(provider: string, source: "cache" | "token"): void {
    const key = labels({ provider, source });
    this.#groupSyncFallbacks.set(key, (this.#groupSyncFallbacks.get(key) ?? 0) + 1);
  }

  /** Stops the event-loop delay monitor. */
  close(): void {
    this.#eventLoopDelay.stop();
  }

  /** Label strings by server → method → status, built once: recording stays a few Map lookups. */
  readonly #requestKeys = new Map<string, Map<string, Map<number, string>>>();

  #requestKey(server: string, method: string, status: number): string {
    let byMethod = this.#requestKeys.get(server);
    if (byMethod === undefined) {
      byMethod = new Map();
      this.#requestKeys.set(server, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let key = byStatus.get(status);
    if (key === undefined) {
      key = labels({ server, method, status: String(status) });
      byStatus.set(status, key);
    }
    return key;
  }

  /** One finished request (for a stream: when its headers went out). `server` must be a configured name or "". */
  recordRequest(server: string, method: string, status: number, seconds: number): void {
    const key = this.#requestKey(server, method, status);
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    let series = this.#latency.get(key);
    if (series === undefined) {
      series = { buckets: new Array<number>(LATENCY_BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.#latency.set(key, series);
    }
    // Only the first bucket that holds the value is counted here; render() makes the counts cumulative.
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    if (i < LATENCY_BUCKETS.length) series.buckets[i] = (series.buckets[i] as number) + 1;
    series.sum += seconds;
    series.count += 1;
  }

  recordUpstreamError(server: string, kind: UpstreamErrorKind): void {
    const key = labels({ server, kind });
    this.#upstreamErrors.set(key, (this.#upstreamErrors.get(key) ?? 0) + 1);
  }

  /** The KV store was down, so a limit was not checked and the request passed (health is DEGRADED meanwhile). */
  recordUnchecked(check: UncheckedLimit): void {
    const key = labels({ check });
    this.#unchecked.set(key, (this.#unchecked.get(key) ?? 0) + 1);
  }

  recordRateLimited(server: string): void {
    const key = labels({ server });
    this.#rateLimited.set(key, (this.#rateLimited.get(key) ?? 0) + 1);
  }

  /**
   * Values PII scrubbing replaced in one message, by entity type (a recognizer's entity, or the kind of rule). The
   * entity names come from the configuration and the built-in recognizers, so the label set is bounded.
   */
  recordPiiReplacements(
    server: string,
    direction: "request" | "response",
    counts: Record<string, number>,
  ): void {
    for (const [entity, count] of Object.entries(counts)) {
      const key = labels({ server, direction, entity });
      this.#piiReplacements.set(key, (this.#piiReplacements.get(key) ?? 0) + count);
    }
  }

  /** `action`: blocked, monitored (let through in monitor mode), or unavailable (a detector gave no answer). */
  recordFirewallFinding(
    server: string,
    direction: "request" | "response",
    detector: string,
    action: "blocked" | "monitored" | "unavailable",
  ): void {
    const key = labels({ server, direction, detector, action });
    this.#firewallFindings.set(key, (this.#firewallFindings.get(key) ?? 0) + 1);
  }

  /** A document from the control plane: applied, or refused (invalid; the last good one keeps serving). */
  recordControlPlaneDocument(kind: "policy" | "config", result: "applied" | "refused"): void {
    const key = labels({ kind, result });
    this.#controlPlaneDocuments.set(key, (this.#controlPlaneDocuments.get(key) ?? 0) + 1);
  }

  /** Requests and errors (HTTP 5xx) so far, for the control plane's monitoring: read per heartbeat, not per request. */
  requestTotals(): { requests: number; errors: number } {
    let requests = 0;
    let errors = 0;
    for (const [key, count] of this.#requests) {
      requests += count;
      if (/status="5\d\d"/.test(key)) errors += count;
    }
    return { requests, errors };
  }

  recordReload(ok: boolean): void {
    const key = ok ? 'result="success"' : 'result="failure"';
    this.#reloads.set(key, (this.#reloads.get(key) ?? 0) + 1);
  }

  streamOpened(server: string): void {
    const key = labels({ server });
    this.#openStreams.set(key, (this.#openStreams.get(key) ?? 0) + 1);
  }

  streamClosed(server: string): void {
    const key = labels({ server });
    this.#openStreams.set(key, Math.max(0, (this.#openStreams.get(key) ?? 0) - 1));
  }

  openStreams(): number {
    let total = 0;
    for (const value of this.#openStreams.values()) total += value;
    return total;
  }

  /**
   * Every metric family with its current series: the one list both /metrics (render) and the OTLP metrics export
   * (telemetry/otel-metrics.ts) read, so the two never disagree. Process gauges are read now.
   */
  snapshot(): MetricsSnapshot {
    const scalar: ScalarBuilder = (name, type, help, series) => ({
      name,
      type,
      help,
      series: [...series].map(([key, value]) => ({ key, labels: parseLabels(key), value })),
    });
    const window = this.#eventLoopWindowMs / 1000;
    return {
      histograms: [
        {
          name: "svc_gateway_request_duration_seconds",
          help: "Time to the response headers (for JSON answers: the whole answer).",
          boundaries: LATENCY_BUCKETS,
          series: [...this.#latency].map(([key, series]) => ({
            key,
            labels: parseLabels(key),
            bucketCounts: [...series.buckets, series.count - series.buckets.reduce((a, b) => a + b, 0)],
            sum: series.sum,
            count: series.count,
          })),
        },
      ],
      scalars: [
        scalar(
          "svc_gateway_requests_total",
          "counter",
          "MCP requests proxied, by upstream server, JSON-RPC method and HTTP status.",
          this.#requests,
        ),
        scalar(
          "svc_gateway_upstream_errors_total",
          "counter",
          "Upstream failures by server and kind (unreachable, timeout, status, stream_aborted, auth_required, forbidden, content_encoding, too_large).",
          this.#upstreamErrors,
        ),
        scalar(
          "svc_gateway_limit_checks_skipped_total",
          "counter",
          "Requests let through without a rate-limit, replay or DPoP check because the KV store was unreachable (fail open).",
          this.#unchecked,
        ),
        scalar(
          "svc_gateway_group_sync_fallbacks_total",
          "counter",
          "Requests whose groups came from the cache (source=cache) or the token alone (source=token) because the identity provider's management API did not answer, by provider.",
          this.#groupSyncFallbacks,
        ),
        scalar(
          "svc_gateway_rate_limited_total",
          "counter",
          "Requests refused with 429 by the per-user rate limit, by upstream server.",
          this.#rateLimited,
        ),
        scalar(
          "svc_gateway_pii_replacements_total",
          "counter",
          "Values replaced by PII scrubbing, by upstream server, direction (request, response) and entity type.",
          this.#piiReplacements,
        ),
        scalar(
          "svc_gateway_firewall_findings_total",
          "counter",
          "Prompt-injection firewall findings by upstream server, direction, detector and action (blocked, monitored, unavailable).",
          this.#firewallFindings,
        ),
        scalar(
          "svc_gateway_config_reloads_total",
          "counter",
          "Configuration reloads by result; a failure keeps the last good configuration serving.",
          this.#reloads,
        ),
        scalar(
          "svc_gateway_control_plane_documents_total",
          "counter",
          "Documents received from the control plane by kind (policy, config) and result (applied, refused: invalid, never applied).",
          this.#controlPlaneDocuments,
        ),
        scalar(
          "svc_gateway_open_streams",
          "gauge",
          "SSE streams currently open, by upstream server.",
          this.#openStreams,
        ),
        ...this.#auditSinkFamilies(scalar),
        scalar(
          "svc_gateway_audit_exports_deferred",
          "gauge",
          "1 while exporters wait in their spools for the gateway's load to drop (SVC_AUDIT_EXPORT_DEFER_SECONDS), else 0.",
          new Map([["", this.#exportsDeferred() ? 1 : 0]]),
        ),
        scalar(
          "process_resident_memory_bytes",
          "gauge",
          "Resident memory size in bytes.",
          new Map([["", process.memoryUsage.rss()]]),
        ),
        ...this.#memoryFamilies(scalar),
        scalar(
          "nodejs_eventloop_delay_max_seconds",
          "gauge",
          `Largest event-loop delay over the current ${window} s window and the previous one.`,
          new Map([["", this.#eventLoopDelay.maxSeconds()]]),
        ),
      ],
    };
  }

  /**
   * Where resident memory goes, so a growing RSS can be told apart: the V8 heap (objects), external memory (Buffers
   * and other memory V8 objects hold outside the heap) and, of that, ArrayBuffers. The rest of RSS is code (the Node
   * binary, native addons, compiled code) and allocator slack.
   */
  #memoryFamilies(scalar: ScalarBuilder): ScalarFamily[] {
    const usage = process.memoryUsage();
    return [
      scalar(
        "nodejs_heap_size_used_bytes",
        "gauge",
        "V8 heap in use, in bytes.",
        new Map([["", usage.heapUsed]]),
      ),
      scalar(
        "nodejs_heap_size_total_bytes",
        "gauge",
        "V8 heap reserved, in bytes.",
        new Map([["", usage.heapTotal]]),
      ),
      scalar(
        "nodejs_external_memory_bytes",
        "gauge",
        "Memory held by V8 objects outside the heap (Buffers included), in bytes.",
        new Map([["", usage.external]]),
      ),
      scalar(
        "nodejs_array_buffers_bytes",
        "gauge",
        "ArrayBuffer and Buffer memory (part of the external memory), in bytes.",
        new Map([["", usage.arrayBuffers]]),
      ),
    ];
  }

  /** Per audit sink (stdout, file, `<type>:<name>` for exporters): what was delivered, failed, waits, was lost. */
  #auditSinkFamilies(scalar: ScalarBuilder): ScalarFamily[] {
    const sinks = this.#auditSinks();
    const perSink = (value: (sink: SinkStatus) => number) =>
      new Map(sinks.map((sink) => [labels({ sink: sink.name }), value(sink)]));
    return [
      scalar(
        "svc_gateway_audit_events_exported_total",
        "counter",
        "Audit events each sink accepted (stdout, file, <type>:<name> for exporters); per sink since it was configured.",
        perSink((sink) => sink.exported),
      ),
      scalar(
        "svc_gateway_audit_export_failures_total",
        "counter",
        "Failed delivery attempts (one batch each) by sink; the events are retried, not lost.",
        perSink((sink) => sink.failures),
      ),
      scalar(
        "svc_gateway_audit_spooled_events",
        "gauge",
        "Audit events waiting for each sink (on disk for exporters, in memory for stdout and file).",
        perSink((sink) => sink.backlogEvents),
      ),
      scalar(
        "svc_gateway_audit_dropped_total",
        "counter",
        "Audit events dropped for a sink because its backlog was at its cap (SVC_AUDIT_SPOOL_MAX_BYTES); 0 unless it was hit.",
        perSink((sink) => sink.dropped),
      ),
      scalar(
        "svc_gateway_audit_dead_lettered_total",
        "counter",
        "Audit events a sink refused for good, moved to its dead-letter file in the spool directory.",
        perSink((sink) => sink.deadLettered),
      ),
    ];
  }

  /** The Prometheus text exposition of snapshot(). */
  render(): string {
    const out: string[] = [];
    const { scalars, histograms } = this.snapshot();
    const withLabels = (name: string, key: string): string => (key === "" ? name : `${name}{${key}}`);
    // The request counter first, then its latency histogram, then the rest: the order /metrics always had.
    const [requests, ...rest] = scalars;
    const scalarFamily = (family: ScalarFamily): void => {
      out.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
      for (const series of family.series) out.push(`${withLabels(family.name, series.key)} ${series.value}`);
    };
    if (requests !== undefined) scalarFamily(requests);
    for (const family of histograms) {
      out.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} histogram`);
      for (const series of family.series) {
        let cumulative = 0;
        family.boundaries.forEach((bound, i) => {
          cumulative += series.bucketCounts[i] as number;
          out.push(`${family.name}_bucket{${series.key},le="${bound}"} ${cumulative}`);
        });
        out.push(`${family.name}_bucket{${series.key},le="+Inf"} ${series.count}`);
        out.push(`${withLabels(`${family.name}_sum`, series.key)} ${series.sum}`);
        out.push(`${withLabels(`${family.name}_count`, series.key)} ${series.count}`);
      }
    }
    for (const family of rest) scalarFamily(family);
    return `${out.join("\n")}\n`;
  }
}
