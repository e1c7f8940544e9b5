// The SSE streams the gateway is relaying right now: counted per server for /metrics, and closable as a
// group, because a GET notification stream never ends by itself and drain must end it (the client
// reconnects, with Last-Event-ID, to a replica that is not shutting down).
import type { GatewayMetrics } from "../runtime/metrics.ts";

export type StreamKind = "get" | "post";

interface OpenStream {
  server: string;
  kind: StreamKind;
  close: () => void;
}

export class OpenStreams {
  readonly #streams = new Set<OpenStream>();
  readonly #metrics: GatewayMetrics;

  constructor(metrics: GatewayMetrics) {
    this.#metrics = metrics;
  }

  /** Registers a stream; call the returned function exactly when it ends (it is idempotent). */
  open(server: string, kind: StreamKind, close: () => void): () => void {
    const stream: OpenStream = { server, kind, close };
    this.#streams.add(stream);
    this.#metrics.streamOpened(server);
    return () => {
      if (this.#streams.delete(stream)) this.#metrics.streamClosed(server);
    };
  }

  get size(): number {
    return this.#streams.size;
  }

  /** Ends every open stream of a kind (their own `close` unregisters them). */
  closeAll(kind: StreamKind): number {
    let closed = 0;
    for (const stream of [...this.#streams]) {
      if (stream.kind !== kind) continue;
      stream.close();
      closed++;
    }
    return closed;
  }
}
