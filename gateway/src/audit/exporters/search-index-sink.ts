// The search_index exporter: audit events into Elasticsearch through the official client's bulk API, one index per
// UTC day, each document's `_id` the event's hash so a redelivery (the queue delivers at least once) overwrites the
// earlier copy instead of adding a second. One attempt per write, bounded by the exporter's `timeout`; the queue
// retries. Messages name the exporter and what failed, never the api_key.
import { errors } from "@elastic/elasticsearch";
import type { ChainedAuditEvent } from "../audit-event.ts";
import { eventJson } from "../event-json.ts";
import { type AuditSink, SinkWriteError } from "../sink.ts";
import { exporterSinkName } from "./enabled.ts";
import { retryAfterMs } from "./retry-after.ts";
import {
  type SearchIndexExporterConfig,
  searchIndexClient,
  searchIndexNodeOrigin,
} from "./search-index-client.ts";
import { dailyIndexName, indexTemplate } from "./search-index-template.ts";

export type { SearchIndexExporterConfig } from "./search-index-client.ts";

/** How many distinct item errors a message quotes, and how much of each reason: messages stay bounded. */
const QUOTED_ITEM_ERRORS = 3;
const QUOTED_REASON_CHARS = 200;

interface ItemFailure {
  event: ChainedAuditEvent;
  status: number;
  detail: string;
}

/**
 * An item the receiver may take on a later attempt: overloaded (429), timed out (408) or failing on its side (5xx).
 * Any other 4xx (a mapping conflict, a malformed document) will be refused again however often it is sent.
 */
function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

function bounded(text: string): string {
  return text.length > QUOTED_REASON_CHARS ? `${text.slice(0, QUOTED_REASON_CHARS)}…` : text;
}

function summarise(failures: readonly ItemFailure[]): string {
  const distinct = [...new Set(failures.map((f) => `HTTP ${f.status} ${f.detail}`))];
  const quoted = distinct.slice(0, QUOTED_ITEM_ERRORS).join("; ");
  return distinct.length > QUOTED_ITEM_ERRORS
    ? `${quoted}; and ${distinct.length - QUOTED_ITEM_ERRORS} more`
    : quoted;
}

/** The `type: reason` of an Elasticsearch error body, if the body is one. */
function elasticError(body: unknown): string | undefined {
  const error = (body as { error?: unknown } | null | undefined)?.error;
  if (typeof error === "string") return bounded(error);
  if (typeof error !== "object" || error === null) return undefined;
  const { type, reason } = error as { type?: unknown; reason?: unknown };
  const parts = [type, reason].filter((part): part is string => typeof part === "string");
  return parts.length === 0 ? undefined : bounded(parts.join(": "));
}

export function searchIndexSink(config: SearchIndexExporterConfig): AuditSink {
  const client = searchIndexClient(config);
  const name = exporterSinkName("search_index", config.name);
  const origin = searchIndexNodeOrigin(client);
  const timeoutMs = config.timeout * 1000;
  const template = indexTemplate(config.index_prefix);
  const secrets = [config.api_key, config.url === undefined ? undefined : new URL(config.url).password]
    .filter((secret): secret is string => secret !== undefined && secret !== "")
    .flatMap((secret) => [secret, decodedOrSame(secret)]);
  // Installed once per sink lifetime, before the first bulk; a failed install is tried again on the next write.
  let templateInstalled = false;

  /** Belt and braces: whatever a client or server message echoes, a secret never leaves in ours. */
  function scrub(text: string): string {
    return secrets.reduce((out, secret) => out.split(secret).join("[redacted]"), text);
  }

  function fail(
    message: string,
    options: ConstructorParameters<typeof SinkWriteError>[1] = {},
  ): SinkWriteError {
    return new SinkWriteError(scrub(`${name}: ${message}`), options);
  }

  /** A request that did not come back with a usable answer: the whole batch is retried. */
  function requestFailure(step: string, error: unknown, signal: AbortSignal): SinkWriteError {
    if (error instanceof errors.ResponseError) {
      const status = error.statusCode ?? 0;
      const detail = elasticError(error.body);
      const hint = status === 401 || status === 403 ? " (the api_key was refused)" : "";
      return fail(`${step} failed with HTTP ${status}${hint}${detail === undefined ? "" : `: ${detail}`}`, {
        retryAfterMs: retryAfterMs(error.headers?.["retry-after"]),
      });
    }
    // The attempt's deadline aborts the request; the client reports that as an abort or a connection error.
    if (error instanceof errors.TimeoutError || signal.aborted) {
      return fail(`${step} got no answer from ${origin} within the ${config.timeout} s timeout`);
    }
    if (error instanceof errors.ProductNotSupportedError) {
      return fail(
        `${step}: the server at ${origin} did not identify as Elasticsearch (x-elastic-product header)`,
      );
    }
    if (error instanceof errors.ConnectionError || error instanceof errors.NoLivingConnectionsError) {
      return fail(`${step}: could not reach ${origin}: ${bounded(error.message)}`);
    }
    const what = error instanceof Error ? `${error.name}: ${bounded(error.message)}` : "unknown error";
    return fail(`${step} failed against ${origin}: ${what}`);
  }

  async function installTemplate(signal: AbortSignal): Promise<void> {
    if (templateInstalled) return;
    try {
      await client.indices.putIndexTemplate(template, { signal });
    } catch (error) {
      throw requestFailure(`installing index template '${template.name}'`, error, signal);
    }
    templateInstalled = true;
  }

  async function write(batch: readonly ChainedAuditEvent[]): Promise<void> {
    if (batch.length === 0) return;
    const signal = AbortSignal.timeout(timeoutMs);
    await installTemplate(signal);

    const sent: ChainedAuditEvent[] = [];
    const refused: ItemFailure[] = [];
    // Both lines of each item as JSON text: the client passes strings through as they are, so the event's text is
    // the one already made for the spool (event-json.ts), not a second serialisation.
    const operations: string[] = [];
    for (const event of batch) {
      const index = dailyIndexName(config.index_prefix, event);
      if (index === undefined) {
        refused.push({
          event,
          status: 400,
          detail: `event time '${bounded(String(event.time))}' is not a date`,
        });
        continue;
      }
      sent.push(event);
      operations.push(JSON.stringify({ index: { _index: index, _id: event.hash } }), eventJson(event));
    }

    const retryable: ItemFailure[] = [];
    if (sent.length > 0) {
      let response: Awaited<ReturnType<typeof client.bulk>>;
      try {
        response = await client.bulk({ operations }, { signal });
      } catch (error) {
        throw requestFailure(`bulk request of ${sent.length} events`, error, signal);
      }
      if (response.items.length !== sent.length) {
        throw fail(
          `bulk response has ${response.items.length} items for ${sent.length} events sent; resending all`,
        );
      }
      if (response.errors) {
        response.items.forEach((item, position) => {
          const result = item.index;
          const event = sent[position] as ChainedAuditEvent;
          if (result === undefined) {
            // Not an answer for the action sent: the item may or may not be stored, and resending is harmless.
            retryable.push({ event, status: 0, detail: "no index result for this item" });
            return;
          }
          if (result.error === undefined) return;
          const failure = { event, status: result.status, detail: elasticError(result) ?? "item error" };
          (isRetryableStatus(result.status) ? retryable : refused).push(failure);
        });
      }
    }

    // Refused items are never worth resending, so they only decide the outcome when nothing retryable is left:
    // retrying the retryable ones first keeps the rest of the batch moving, and the message says what was refused.
    if (retryable.length > 0) {
      const refusedNote =
        refused.length === 0
          ? ""
          : `; ${refused.length} refused for good and not retried (${summarise(refused)})`;
      throw fail(
        `${retryable.length} of ${batch.length} events not accepted, to retry (${summarise(retryable)})${refusedNote}`,
        { remaining: sortByBatchOrder(batch, retryable) },
      );
    }
    if (refused.length > 0) {
      throw fail(`${refused.length} of ${batch.length} events refused for good (${summarise(refused)})`, {
        remaining: sortByBatchOrder(batch, refused),
        permanent: true,
      });
    }
  }

  return {
    name,
    write,
    async close() {
      await client.close();
    },
  };
}

/** A URL's password as typed, when its percent-encoding decodes. */
function decodedOrSame(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/** The failed events in the order they had in the batch (locally refused ones were collected first). */
function sortByBatchOrder(
  batch: readonly ChainedAuditEvent[],
  failures: readonly ItemFailure[],
): ChainedAuditEvent[] {
  const failed = new Set(failures.map((f) => f.event));
  return batch.filter((event) => failed.has(event));
}
