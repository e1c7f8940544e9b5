// The official Elasticsearch client as the search_index exporter uses it. The client's own retries are off: the audit
// queue retries with backoff and a spool, and a client retrying inside one attempt would both blow the attempt's
// timeout and hide failures from /health.
import { Client, errors } from "@elastic/elasticsearch";
import type { z } from "zod";
import type { searchIndexExporterSchema } from "../../config/schema.ts";

export type SearchIndexExporterConfig = z.output<typeof searchIndexExporterSchema>;

/**
 * A client for the exporter's `url` or `cloud_id` (the client decodes `cloud_id` into its node URL), sending
 * `Authorization: ApiKey <api_key>` when a key is set. Throws an error naming the exporter and the field when the
 * configuration cannot make a client; the message never carries the key.
 */
export function searchIndexClient(config: SearchIndexExporterConfig): Client {
  const target =
    config.url !== undefined
      ? { node: config.url }
      : config.cloud_id !== undefined
        ? { cloud: { id: config.cloud_id } }
        : undefined;
  if (target === undefined) {
    throw new Error(`search_index exporter '${config.name}': url or cloud_id is required`);
  }
  try {
    return new Client({
      ...target,
      ...(config.api_key === undefined ? {} : { auth: { apiKey: config.api_key } }),
      maxRetries: 0,
      requestTimeout: config.timeout * 1000,
      sniffOnStart: false,
      sniffOnConnectionFault: false,
      // The transport replaces credentials in the request metadata it attaches to errors.
      redaction: { type: "replace", additionalKeys: [] },
    });
  } catch (error) {
    const field = config.url !== undefined ? "url" : "cloud_id";
    const reason = error instanceof errors.ConfigurationError ? error.message : String(error);
    throw new Error(`search_index exporter '${config.name}': ${field} is not usable: ${reason}`);
  }
}

/** Where the client sends requests (scheme, host, port; never user info), for tests and messages. */
export function searchIndexNodeOrigin(client: Client): string {
  const connection = client.connectionPool.connections[0];
  if (connection === undefined) throw new Error("the search index client has no node");
  return connection.url.origin;
}
