// Relays an upstream SSE body to the client one event at a time. Each event is parsed (so a policy can
// read or rewrite its JSON-RPC message), re-serialised with its `id:` and `retry:`, and written as soon as
// it is complete. Backpressure goes all the way up: when the client does not keep up, the upstream is paused
// (at most 64 KiB are held), so a stream is never buffered whole.
// If the upstream dies mid-stream, every request on this POST still unanswered gets a JSON-RPC error event,
// so the client fails fast instead of waiting forever. The same goes for a clean end that leaves requests
// unanswered on a stream without event ids. With ids, a clean early end is passed on as is: under the
// 2025-11-25 transport a server may close a stream early and let the client resume with Last-Event-ID.
import { type JsonRpcId, jsonRpcErrorObject } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { isJsonRpcResponse, type JsonRpcMessage, parseJsonRpcEventData } from "../sse/json-rpc.ts";
import { eventData, type SseEvent, serializeSseEvent } from "../sse/sse-event.ts";
import { SseParser } from "../sse/sse-parser.ts";
import type { UpstreamExchange } from "./upstream-exchange.ts";

/** Response-side policy hook (pipeline step 8): sees each event and its JSON-RPC message, returns what to send. */
export type SseEventInspector = (
  event: SseEvent,
  message: JsonRpcMessage | undefined,
) => SseEvent | undefined;

export interface SseRelayOptions {
  upstream: UpstreamExchange;
  server: string;
  requestId: string;
  /** Requests in the POST body still waiting for an answer on this stream; empty for GET streams. */
  pendingIds: readonly JsonRpcId[];
  inspect?: SseEventInspector;
  /** Called once, when the stream ends for any reason; `aborted` = upstream failed mid-stream. */
  onEnd: (outcome: { aborted: boolean; error?: unknown }) => void;
}

export interface SseRelay {
  body: ReadableStream<Uint8Array>;
  /** Ends the relay from the gateway's side (drain): closes the client stream and the upstream body. */
  close: () => void;
}

function idKey(id: JsonRpcId): string {
  return typeof id === "string" ? `s:${id}` : `n:${String(id)}`;
}

const encoder = new TextEncoder();

export function relaySse(options: SseRelayOptions): SseRelay {
  const parser = new SseParser();
  const pending = new Map<string, JsonRpcId>();
  for (const id of options.pendingIds) pending.set(idKey(id), id);
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
  let ended = false;
  /** An event carried an `id:`: the client can resume this stream, so a clean early end is legitimate. */
  let resumable = false;

  const finish = (outcome: { aborted: boolean; error?: unknown }): void => {
    if (ended) return;
    ended = true;
    parser.end();
    options.onEnd(outcome);
  };

  const render = (events: SseEvent[]): string => {
    let out = "";
    for (const original of events) {
      if (original.id !== undefined && original.id !== "") resumable = true;
      const message = parseJsonRpcEventData(eventData(original));
      if (message !== undefined && pending.size > 0 && isJsonRpcResponse(message)) {
        pending.delete(idKey(message.id ?? null));
      }
      const event = options.inspect === undefined ? original : options.inspect(original, message);
      if (event !== undefined) out += serializeSseEvent(event);
    }
    return out;
  };

  const abortedEvents = (error: unknown): string => {
    const failure = new GatewayError(
      "upstream_stream_aborted",
      `Upstream server '${options.server}' closed the stream before answering`,
      { server: options.server, cause: error },
    );
    const rpcError = jsonRpcErrorObject(failure, options.requestId);
    let out = "";
    for (const id of pending.values()) {
      out += serializeSseEvent({
        event: "message",
        data: [JSON.stringify({ jsonrpc: "2.0", id, error: rpcError })],
      });
    }
    return out;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        options.upstream.attach({
          data(chunk) {
            if (ended) return false;
            const out = render(parser.push(chunk));
            if (out !== "") controller.enqueue(encoder.encode(out));
            return (controller.desiredSize ?? 0) > 0;
          },
          end() {
            if (ended) return;
            // Ended cleanly with requests unanswered and no event id to resume from: nobody will ever answer
            // them, so the client gets errors instead of waiting forever.
            const stranded = !resumable && pending.size > 0;
            if (stranded) controller.enqueue(encoder.encode(abortedEvents(undefined)));
            controller.close();
            finish({ aborted: stranded });
          },
          error(error) {
            if (ended) return; // closed by the gateway (drain) or the client
            const out = abortedEvents(error);
            if (out !== "") controller.enqueue(encoder.encode(out));
            controller.close();
            finish({ aborted: true, error });
          },
        });
      },
      pull() {
        options.upstream.resume();
      },
      cancel() {
        // The client went away: stop reading, and let the upstream see the disconnect.
        finish({ aborted: false });
        options.upstream.abort();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );

  return {
    body,
    close: () => {
      if (ended) return;
      finish({ aborted: false });
      options.upstream.abort();
      try {
        controllerRef?.close();
      } catch {
        // already closed or errored
      }
    },
  };
}
