// Relays an upstream SSE body to the client one event at a time. Each event is parsed (so a policy can
// read or rewrite its JSON-RPC message), re-serialised with its `id:` and `retry:`, and the events completed
// by one upstream chunk go out in one write. The relay writes straight to the client's Node response: a Web
// ReadableStream in between (what a Fetch `Response` body needs) cost a buffer copy, a promise per chunk and a
// separate syscall for the headers, for nothing the relay needs.
// Backpressure goes all the way up: when the client's socket buffer is full, the upstream is paused until it
// drains, so a stream is never buffered whole. A client that goes away aborts the upstream stream.
// If the upstream dies mid-stream, every request on this POST still unanswered gets a JSON-RPC error event,
// so the client fails fast instead of waiting forever. The same goes for a clean end that leaves requests
// unanswered on a stream without event ids. With ids, a clean early end is passed on as is: under the
// 2025-11-25 transport a server may close a stream early and let the client resume with Last-Event-ID.
// One event may not grow past `maxEventBytes` (an upstream sending a line without end would otherwise make the
// gateway hold all of it): past that the upstream connection is dropped and the stream ends the same way,
// each unanswered request getting an `upstream_answer_too_large` error event.
import type { ServerResponse } from "node:http";
import { type JsonRpcId, jsonRpcErrorObject } from "../errors/error-response.ts";
import { GatewayError } from "../errors/gateway-error.ts";
import { isJsonRpcResponse, type JsonRpcMessage, parseJsonRpcEventData, rpcIdKey } from "../sse/json-rpc.ts";
import { eventData, type SseEvent, serializeSseEvent } from "../sse/sse-event.ts";
import { SseEventTooLargeError, SseParser } from "../sse/sse-parser.ts";
import type { UpstreamExchange } from "./upstream-exchange.ts";

/**
 * Response-side policy hook (pipeline step 8): sees each event and its JSON-RPC message, returns what to send. A
 * promise (a policy waiting on a remote detector) holds the stream: events still go out in the upstream's order,
 * and the upstream is paused until the answer is in.
 */
export type SseEventInspector = (
  event: SseEvent,
  message: JsonRpcMessage | undefined,
) => SseEvent | undefined | Promise<SseEvent | undefined>;

export interface SseRelayOptions {
  upstream: UpstreamExchange;
  /** The client's response, its head already written: the relay writes the body and ends it. */
  client: ServerResponse;
  server: string;
  requestId: string;
  /** Requests in the POST body still waiting for an answer on this stream; empty for GET streams. */
  pendingIds: readonly JsonRpcId[];
  /** The most one event may hold before it is complete (SVC_MAX_SSE_EVENT_BYTES). */
  maxEventBytes: number;
  inspect?: SseEventInspector;
  /**
   * Called once, when the stream ends for any reason; `aborted` = upstream failed mid-stream. `error` is what
   * failed: the upstream's error, or the GatewayError `upstream_answer_too_large` when an event passed the limit.
   */
  onEnd: (outcome: { aborted: boolean; error?: unknown }) => void;
}

/** Events rendered as text, up to an inspector's failure if one failed (the stream then ends after the text). */
interface Rendered {
  text: string;
  failure?: unknown;
}

/** The parts in order, promises settled; the text stops at the first rejection, which becomes the failure. */
async function settleInOrder(parts: Array<string | Promise<SseEvent | undefined>>): Promise<Rendered> {
  let text = "";
  for (const part of parts) {
    if (typeof part === "string") {
      text += part;
      continue;
    }
    try {
      const event = await part;
      if (event !== undefined) text += serializeSseEvent(event);
    } catch (error) {
      // Later parts are not awaited: their rejections must not go unhandled.
      for (const later of parts) if (typeof later !== "string") later.catch(() => {});
      return { text, failure: error };
    }
  }
  return { text };
}

export interface SseRelay {
  /** Ends the relay from the gateway's side (drain): ends the client's response and drops the upstream body. */
  close: () => void;
}

/**
 * How long the head waits for the first event before going out alone. Upstreams often send their head and
 * first event in separate writes a fraction of a millisecond apart; waiting lets them leave in one write to
 * the client (one syscall, one wake-up of the client, instead of two). Events themselves never wait: the
 * head goes with the first one whenever it comes. Only a stream that stays silent has its head this late.
 */
const HEAD_WAIT_MS = 5;

export function relaySse(options: SseRelayOptions): SseRelay {
  const { client, upstream } = options;
  const parser = new SseParser({ maxEventBytes: options.maxEventBytes });
  const pending = new Map<string, JsonRpcId>();
  for (const id of options.pendingIds) pending.set(rpcIdKey(id), id);
  let ended = false;
  /** An event carried an `id:`: the client can resume this stream, so a clean early end is legitimate. */
  let resumable = false;
  /** Something went to the client after the head; until then the head waits to travel with the first event. */
  let wrote = false;
  let headTimer: NodeJS.Timeout | undefined;
  let waitingForDrain = false;

  const onDrain = (): void => {
    waitingForDrain = false;
    if (!ended) upstream.resume();
  };
  const onClientClose = (): void => {
    // Closed before the relay ended the response: the client went away. Let the upstream see the disconnect.
    if (ended) return;
    finish({ aborted: false });
    upstream.abort();
  };

  const finish = (outcome: { aborted: boolean; error?: unknown }): void => {
    if (ended) return;
    ended = true;
    clearTimeout(headTimer);
    parser.end();
    client.off("close", onClientClose);
    client.off("drain", onDrain);
    options.onEnd(outcome);
  };

  /** Writes to the client; false while its buffer is full (the upstream stays paused until "drain"). */
  const write = (text: string): boolean => {
    if (text !== "") {
      if (!wrote) {
        wrote = true;
        clearTimeout(headTimer);
      }
      if (!client.write(text) && !waitingForDrain) {
        waitingForDrain = true;
        client.once("drain", onDrain);
      }
    }
    return !waitingForDrain;
  };

  /** Marks the request an answer answers as answered: its exact id, else the one whose id it reads as (7, "7"). */
  const answered = (id: JsonRpcId): void => {
    if (pending.delete(rpcIdKey(id)) || id === null) return;
    const wanted = Number(id);
    if (!Number.isFinite(wanted)) return;
    const matches = [...pending].filter(([, pendingId]) => Number(pendingId) === wanted);
    if (matches.length === 1) pending.delete((matches[0] as [string, JsonRpcId])[0]);
  };

  /**
   * The events as text; a promise of it when an inspector answered with one. An inspector that throws (or rejects)
   * ends the stream: what went before it still goes out, then an error event for each unanswered request.
   */
  const render = (events: SseEvent[]): Rendered | Promise<Rendered> => {
    let out = "";
    let waiting: Array<string | Promise<SseEvent | undefined>> | undefined;
    let failure: unknown;
    for (const original of events) {
      if (original.id !== undefined && original.id !== "") resumable = true;
      const message = parseJsonRpcEventData(eventData(original));
      if (message !== undefined && pending.size > 0 && isJsonRpcResponse(message)) {
        answered(message.id ?? null);
      }
      let event: SseEvent | undefined | Promise<SseEvent | undefined>;
      try {
        event = options.inspect === undefined ? original : options.inspect(original, message);
      } catch (error) {
        failure = error;
        break;
      }
      if (event instanceof Promise) {
        waiting ??= [];
        waiting.push(out, event);
        out = "";
      } else if (event !== undefined) out += serializeSseEvent(event);
    }
    if (waiting === undefined) return { text: out, failure };
    waiting.push(out);
    return settleInOrder(waiting).then((settled) => ({
      text: settled.text,
      failure: settled.failure ?? failure,
    }));
  };

  /** Writes what was rendered; a failure ends the stream after it. False while the upstream must wait. */
  const writeRendered = (rendered: Rendered): boolean => {
    if (rendered.failure === undefined) return write(rendered.text);
    endWithError(rendered.text, rendered.failure);
    return false;
  };

  /**
   * Work that waits on an inspector, in the upstream's order: while it is pending every later chunk, the end and any
   * failure queue behind it, and the upstream stays paused.
   */
  let queue: Promise<void> | undefined;
  const enqueue = (step: () => void | Promise<void>): void => {
    const run = (queue ?? Promise.resolve()).then(step).catch((error: unknown) => {
      if (ended) return;
      // The stream cannot go on without a policy having seen what follows.
      endWithError("", error);
    });
    queue = run;
    void run.then(() => {
      if (queue !== run) return;
      queue = undefined;
      if (!ended && !waitingForDrain) upstream.resume();
    });
  };
  /** Writes rendered events now, or in turn behind pending inspections; false while the upstream must wait. */
  const emit = (rendered: Rendered | Promise<Rendered>): boolean => {
    if (queue === undefined && !(rendered instanceof Promise)) return writeRendered(rendered);
    enqueue(async () => {
      const settled = await rendered;
      if (!ended) writeRendered(settled);
    });
    return false;
  };

  /**
   * Ends the stream from the gateway's side because of `error`: `text` (events already inspected) goes out first, then
   * an error event for each unanswered request, naming the gateway's error (an inspection that cannot read what the
   * upstream sent) or the upstream's failure.
   */
  const endWithError = (text: string, error: unknown): void => {
    if (ended) return;
    finish({ aborted: true, error });
    upstream.abort(error instanceof Error ? error : new Error(String(error)));
    const failure =
      error instanceof GatewayError
        ? error
        : new GatewayError(
            "upstream_stream_aborted",
            `Upstream server '${options.server}' closed the stream before answering`,
            {
              server: options.server,
              cause: error,
            },
          );
    client.end(text + errorEvents(failure));
  };

  /** One JSON-RPC error event for each request of this POST still unanswered. */
  const errorEvents = (failure: GatewayError): string => {
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

  const abortedEvents = (error: unknown): string =>
    errorEvents(
      new GatewayError(
        "upstream_stream_aborted",
        `Upstream server '${options.server}' closed the stream before answering`,
        { server: options.server, cause: error },
      ),
    );

  /** An event passed the limit: what completed before it still goes out, then the stream ends with errors. */
  const endTooLarge = (tooLarge: SseEventTooLargeError): void => {
    const failure = new GatewayError(
      "upstream_answer_too_large",
      `Upstream server '${options.server}' sent an SSE event larger than the limit of ${tooLarge.limit} bytes (SVC_MAX_SSE_EVENT_BYTES)`,
      { server: options.server, cause: tooLarge },
    );
    const completed = render(tooLarge.completed);
    const end = (rendered: Rendered): void => {
      if (ended) return;
      if (rendered.failure !== undefined) {
        endWithError(rendered.text, rendered.failure);
        return;
      }
      finish({ aborted: true, error: failure });
      client.end(rendered.text + errorEvents(failure));
    };
    if (queue === undefined && !(completed instanceof Promise)) end(completed);
    else enqueue(async () => end(await completed));
    // Dropped, not drained: the rest of the event is unwanted, and the connection must not be reused mid-event.
    // (Its error callback, if any, finds the stream ended or queues behind the end.)
    upstream.abort(failure);
  };

  // The client may have gone between the upstream's head and now (nothing watched it in that gap).
  if (client.destroyed) {
    finish({ aborted: false });
    upstream.abort();
    return { close: () => {} };
  }
  client.on("close", onClientClose);
  upstream.attach({
    data(chunk) {
      if (ended) return false;
      let events: SseEvent[];
      try {
        events = parser.push(chunk);
      } catch (error) {
        if (!(error instanceof SseEventTooLargeError)) throw error;
        endTooLarge(error);
        return false;
      }
      return emit(render(events));
    },
    end() {
      const end = (): void => {
        if (ended) return;
        // Ended cleanly with requests unanswered and no event id to resume from: nobody will ever answer
        // them, so the client gets errors instead of waiting forever.
        const stranded = !resumable && pending.size > 0;
        finish({ aborted: stranded });
        client.end(stranded ? abortedEvents(undefined) : undefined);
      };
      if (queue === undefined) end();
      else enqueue(end);
    },
    error(error) {
      const fail = (): void => {
        if (ended) return; // closed by the gateway (drain) or the client
        finish({ aborted: true, error });
        client.end(abortedEvents(error));
      };
      if (queue === undefined) fail();
      else enqueue(fail);
    },
  });
  // Nothing arrived with the head: unless an event follows shortly, send the head alone, so the client knows
  // the stream is open (progress and notifications may be a long way off).
  if (!wrote && !ended) {
    headTimer = setTimeout(() => {
      if (!wrote && !ended) client.flushHeaders();
    }, HEAD_WAIT_MS);
  }

  return {
    close: () => {
      if (ended) return;
      finish({ aborted: false });
      upstream.abort();
      client.end();
    },
  };
}
