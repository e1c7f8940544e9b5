// A prompt-injection detector run by another service: the gateway POSTs each text to the operator's URL and reads
// back a score. The request carries only the text and its direction: no user identity, no tool name, no
// credentials of the gateway's clients, so a third-party service learns nothing but the text it must judge.
// Whatever keeps the service from giving a clean answer (timeout, refused connection, non-2xx status, an answer
// that is not the expected JSON or is too big) is DetectorUnavailableError; the firewall's on_error decides
// whether that blocks or lets the text through.
import { type Dispatcher, Pool } from "undici";
import { z } from "zod";
import {
  type Detection,
  type Detector,
  DetectorUnavailableError,
  type FirewallDirection,
} from "./detector.ts";

export interface WebhookDetectorOptions {
  /** Names the detector (`webhook:<name>`) in audit records, metrics and errors. */
  readonly name: string;
  /** Where each text is POSTed: an absolute http or https URL. */
  readonly url: string;
  /** Bound of one call: waiting for a connection, connecting, sending, headers and the whole body. */
  readonly timeoutMs: number;
  /** Sent with every call (e.g. authorization); values never appear in logs or errors. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Largest answer body read; a bigger answer makes the detector unavailable instead of being buffered. */
  readonly maxResponseBytes?: number;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024;
/** A webhook slower than this would hold every inspected message for longer than any client waits. */
export const MAX_WEBHOOK_TIMEOUT_MS = 60_000;
/** Bounds of what an answer can add to the audit record. */
export const MAX_WEBHOOK_LABELS = 16;
export const MAX_WEBHOOK_LABEL_LENGTH = 64;
/** Connections kept to the webhook: enough for concurrent inspections, bounded so a slow service is not flooded. */
const WEBHOOK_CONNECTIONS = 16;
const KEEP_ALIVE_MS = 30_000;

/** Headers the detector sets itself: an operator's value would break the request framing or its JSON body. */
const RESERVED_HEADERS = new Set([
  "content-type",
  "content-length",
  "transfer-encoding",
  "host",
  "connection",
]);
/** RFC 9110 token: what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab: no CR/LF (header injection), no other controls. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

const answerSchema = z.object({
  score: z.number().min(0).max(1),
  labels: z.array(z.string()).optional(),
});

export function webhookDetector(options: WebhookDetectorOptions): Detector {
  const name = `webhook:${options.name}`;
  const target = webhookUrl(options);
  const timeoutMs = positiveInteger(options, "timeoutMs", options.timeoutMs, MAX_WEBHOOK_TIMEOUT_MS);
  const maxResponseBytes = positiveInteger(
    options,
    "maxResponseBytes",
    options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    Number.MAX_SAFE_INTEGER,
  );
  const extraHeaders = operatorHeaders(options);
  const pool = new Pool(target.origin, {
    connections: WEBHOOK_CONNECTIONS,
    keepAliveTimeout: KEEP_ALIVE_MS,
    // The call's own deadline (an abort signal) bounds every phase; these are only a second line.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const path = `${target.pathname}${target.search}`;
  let closed = false;

  const unavailable = (reason: string, cause?: unknown): DetectorUnavailableError =>
    new DetectorUnavailableError(name, reason, cause === undefined ? undefined : { cause });

  async function score(text: string, direction: FirewallDirection): Promise<Detection> {
    if (closed) throw unavailable("the detector was closed by a configuration reload");
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      const answer = await pool.request({
        method: "POST",
        path,
        headers: { ...extraHeaders, "content-type": "application/json" },
        body: JSON.stringify({ text, direction }),
        signal: deadline,
      });
      if (answer.statusCode < 200 || answer.statusCode > 299) {
        discard(answer.body); // nothing in an error page is worth reading; the connection is not worth keeping
        throw unavailable(`answered HTTP ${answer.statusCode}`);
      }
      const encoding = answer.headers["content-encoding"];
      if (encoding !== undefined && encoding !== "identity") {
        discard(answer.body);
        throw unavailable(`answered a body with content-encoding '${String(encoding)}' (none was asked for)`);
      }
      const body = await boundedBody(answer.body, maxResponseBytes, answer.headers["content-length"]);
      if (body === undefined) throw unavailable(`answered more than ${maxResponseBytes} bytes`);
      return detection(body);
    } catch (error) {
      if (error instanceof DetectorUnavailableError) throw error;
      if (deadline.aborted || isUndiciTimeout(error)) throw unavailable(`timed out after ${timeoutMs} ms`);
      if (closed) throw unavailable("the detector was closed by a configuration reload");
      throw unavailable(`request failed (${networkReason(error)})`, error);
    }
  }

  function detection(body: string): Detection {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw unavailable("answered no JSON");
    }
    const parsed = answerSchema.safeParse(json);
    if (!parsed.success) {
      const score = (json as { score?: unknown } | null)?.score;
      if (typeof score !== "number" || score < 0 || score > 1) {
        throw unavailable("score missing or not in [0,1]");
      }
      throw unavailable("labels is not a list of strings");
    }
    const { score, labels } = parsed.data;
    if (labels === undefined) return { score };
    return {
      score,
      rules: labels.slice(0, MAX_WEBHOOK_LABELS).map((label) => label.slice(0, MAX_WEBHOOK_LABEL_LENGTH)),
    };
  }

  return {
    name,
    score,
    async close() {
      if (closed) return;
      closed = true;
      // destroy, not close: a reload should not wait for calls in flight (they fail as unavailable instead).
      await pool.destroy();
    },
  };
}

type AnswerBody = Dispatcher.ResponseData["body"];

/** Drops an answer's body unread (and its connection): the abort this causes is expected, not an error. */
function discard(body: AnswerBody): void {
  body.on("error", () => {});
  body.destroy();
}

/** Reads at most `limit` bytes; undefined when the answer is bigger (the rest is never read). */
async function boundedBody(
  body: AnswerBody,
  limit: number,
  contentLength: string | string[] | undefined,
): Promise<string | undefined> {
  if (typeof contentLength === "string" && Number(contentLength) > limit) {
    discard(body);
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      discard(body);
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The pool's own headers/body timeouts equal the call's deadline and may fire first: the same cause. */
function isUndiciTimeout(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "UND_ERR_CONNECT_TIMEOUT"
  );
}

/** A network error's code (ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET) tells an operator what to look at. */
function networkReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  return error instanceof Error ? error.message : String(error);
}

function webhookUrl(options: WebhookDetectorOptions): URL {
  const field = `webhook detector '${options.name}': url`;
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new Error(`${field} must be an absolute http or https URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`${field} must use http or https, not '${url.protocol.slice(0, -1)}'`);
  }
  // Credentials in a URL end up in logs and process listings; headers are the place for them.
  if (url.username !== "" || url.password !== "") {
    throw new Error(`${field} must not carry credentials: put them in headers (e.g. authorization)`);
  }
  if (url.hash !== "") throw new Error(`${field} must not have a #fragment (it is never sent)`);
  return url;
}

function positiveInteger(options: WebhookDetectorOptions, field: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new Error(
      `webhook detector '${options.name}': ${field} must be an integer from 1 to ${max}, got ${value}`,
    );
  }
  return value;
}

function operatorHeaders(options: WebhookDetectorOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [header, value] of Object.entries(options.headers ?? {})) {
    const field = `webhook detector '${options.name}': headers.${header}`;
    if (!HEADER_NAME.test(header)) throw new Error(`${field} is not a valid header name`);
    if (RESERVED_HEADERS.has(header.toLowerCase())) {
      throw new Error(`${field} is set by the detector itself and cannot be configured`);
    }
    // The value is a secret more often than not: the error names the header, never the value.
    if (typeof value !== "string" || !HEADER_VALUE.test(value)) {
      throw new Error(`${field} must be a string of visible ASCII characters (no line breaks)`);
    }
    headers[header.toLowerCase()] = value;
  }
  return headers;
}
