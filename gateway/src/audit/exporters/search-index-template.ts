// What the search_index exporter writes where: the daily index an event goes to and the index template that gives
// those indices their mapping. This file is the one place the mapping is written down; the docs point here.
import type { ChainedAuditEvent } from "../audit-event.ts";

/**
 * `<prefix>-YYYY.MM.DD` from the event's own time in UTC, so an event lands in the index of the day it happened even
 * when it is delivered (or redelivered from the spool) days later, and a redelivery finds its earlier copy by `_id`.
 * Undefined when `time` is not a date.
 */
export function dailyIndexName(prefix: string, event: Pick<ChainedAuditEvent, "time">): string | undefined {
  const at = new Date(event.time);
  if (Number.isNaN(at.getTime())) return undefined;
  const month = String(at.getUTCMonth() + 1).padStart(2, "0");
  const day = String(at.getUTCDate()).padStart(2, "0");
  return `${prefix}-${at.getUTCFullYear()}.${month}.${day}`;
}

/** The template's name: one per prefix, so two exporters writing to the same indices install the same thing. */
export function templateName(prefix: string): string {
  return `${prefix}-audit`;
}

const keyword = { type: "keyword" } as const;

/**
 * The mapping of every audit event field. Ids and enumerations are `keyword` (exact match, aggregations; never split
 * into words), `time` is a `date`, numbers get numeric types. `seq` and `count` are `long` because an instance's
 * sequence number grows for the life of the process and would overflow `integer` after 2^31 events. `reason` is free
 * text, searchable by word, with an exact `reason.keyword` for aggregations. `dynamic: false` keeps a field added to
 * events later in `_source` without letting the first value to arrive choose its type.
 */
const AUDIT_EVENT_MAPPING = {
  dynamic: false,
  properties: {
    time: { type: "date", format: "strict_date_optional_time" },
    kind: keyword,
    request_id: keyword,
    gateway: keyword,
    source: keyword,
    server: keyword,
    method: keyword,
    capability: keyword,
    subject: keyword,
    provider: keyword,
    groups: keyword,
    decision: keyword,
    reason: { type: "text", fields: { keyword: { type: "keyword", ignore_above: 1024 } } },
    status: { type: "integer" },
    latency_ms: { type: "float" },
    count: { type: "long" },
    instance: keyword,
    seq: { type: "long" },
    prev_hash: keyword,
    hash: keyword,
  },
} as const;

/**
 * Above the priority of Elasticsearch's built-in templates (100, e.g. `logs-*-*`, which would turn a matching index
 * into a data stream that refuses `_id`-addressed writes), so a prefix such as `logs-audit` still gets plain indices.
 */
const TEMPLATE_PRIORITY = 500;

/** The body of `PUT _index_template/<templateName(prefix)>`. */
export function indexTemplate(prefix: string) {
  return {
    name: templateName(prefix),
    index_patterns: [`${prefix}-*`],
    priority: TEMPLATE_PRIORITY,
    template: { mappings: AUDIT_EVENT_MAPPING },
    _meta: { managed_by: "svc-gateway", description: "svc-gateway audit events, one index per UTC day" },
  };
}
