// The SIEM upload body gzipped at level 1 instead of the logs ingestion client's default (6). Audit rows are JSON with
// long repeated keys: level 1 already shrinks a batch ~7.7x against ~7.9x at level 6, for half the CPU (measured
// 1.6 vs 3.2 µs per event). That CPU is spent on the gateway's machine for every exported event; the ~3 % more
// bytes on the wire are not worth it.
import { gzip } from "node:zlib";
import type { LogsIngestionClient } from "@azure/monitor-ingestion";

/** The name the client gives its own gzip policy (@azure/monitor-ingestion, gZippingPolicy.js). */
const SDK_GZIP_POLICY = "GzippingPolicy";

type Pipeline = LogsIngestionClient["pipeline"];
type Policy = Parameters<Pipeline["addPolicy"]>[0];

const fastGzipPolicy: Policy = {
  name: "SvcFastGzippingPolicy",
  async sendRequest(request, next) {
    const body = request.body;
    if (typeof body === "string" || body instanceof Uint8Array) {
      request.body = await new Promise<Buffer>((resolve, reject) =>
        gzip(body, { level: 1 }, (error, zipped) => (error ? reject(error) : resolve(zipped))),
      );
    }
    return next(request);
  },
};

/**
 * Replaces the client's gzip policy with the level-1 one. Only when the client's own was found and removed: a client
 * whose policy is named otherwise keeps gzipping as it does, rather than the body being compressed twice.
 */
export function useFastGzip(client: LogsIngestionClient): void {
  const removed = client.pipeline.removePolicy({ name: SDK_GZIP_POLICY });
  if (removed.length > 0) client.pipeline.addPolicy(fastGzipPolicy);
}
