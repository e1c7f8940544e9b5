// HTTP towards an identity provider's management API. Every call has the provider's `timeout`, a bounded body, and
// turns the provider's answer into either JSON or a ProviderError that says what went wrong, never the credentials.
// A 429 carries how long the provider asked to wait (Retry-After, in seconds or as a date, or the X-RateLimit-Reset
// epoch seconds that Auth0-style APIs send): group sync then stops calling that provider until then.
import { request } from "undici";

/** Larger answers are refused: a page of groups is a few hundred KB at most. */
export const MAX_PROVIDER_BODY_BYTES = 4 * 1024 * 1024;

/** Used when a 429 says nothing about how long to wait. */
const DEFAULT_RETRY_AFTER_MS = 30_000;
/** A provider asking for longer than this is obeyed only this long, so one bad header cannot stop sync for days. */
const MAX_RETRY_AFTER_MS = 15 * 60_000;

export class ProviderError extends Error {
  override readonly name = "ProviderError";
  /** HTTP status, or undefined for a network failure or timeout. */
  readonly status: number | undefined;
  /** Set on 429: when the provider may be called again (epoch ms). */
  readonly retryAt: number | undefined;

  constructor(message: string, status?: number, retryAt?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.retryAt = retryAt;
  }
}

export interface ProviderRequest {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Names the call in errors, e.g. "Microsoft Graph transitiveMemberOf". */
  what: string;
}

export async function providerJson(call: ProviderRequest, now: () => number = Date.now): Promise<unknown> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(call.url, {
      method: call.method,
      headers: { accept: "application/json", ...call.headers },
      body: call.body,
      // undici's request follows no redirect: a credential never travels to another host.
      signal: AbortSignal.timeout(call.timeoutMs),
    });
  } catch (error) {
    throw new ProviderError(
      `${call.what}: ${describeNetworkError(error, call.timeoutMs)}`,
      undefined,
      undefined,
      {
        cause: error,
      },
    );
  }
  const text = await boundedText(response.body, call.what);
  if (response.statusCode === 429) {
    const retryAt = now() + retryAfterMs(response.headers, now());
    throw new ProviderError(
      `${call.what}: rate limited by the provider (429); not calling it again before ${new Date(retryAt).toISOString()}`,
      429,
      retryAt,
    );
  }
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new ProviderError(
      `${call.what}: HTTP ${response.statusCode}${errorDetail(text)}`,
      response.statusCode,
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ProviderError(`${call.what}: the answer is not JSON`, response.statusCode, undefined, {
      cause: error,
    });
  }
}

async function boundedText(body: AsyncIterable<Buffer>, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_PROVIDER_BODY_BYTES) {
      throw new ProviderError(`${what}: the answer is larger than ${MAX_PROVIDER_BODY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

type Headers = Record<string, string | string[] | undefined>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After (delta seconds or an HTTP date, RFC 9110 10.2.3), else X-RateLimit-Reset (epoch seconds). */
export function retryAfterMs(headers: Headers, nowMs: number): number {
  const clamp = (ms: number) => Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
  const retryAfter = header(headers, "retry-after")?.trim();
  if (retryAfter !== undefined && retryAfter !== "") {
    if (/^\d+$/.test(retryAfter)) return clamp(Number(retryAfter) * 1000);
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return clamp(date - nowMs);
  }
  const reset = header(headers, "x-ratelimit-reset")?.trim();
  if (reset !== undefined && /^\d+$/.test(reset)) return clamp(Number(reset) * 1000 - nowMs);
  return DEFAULT_RETRY_AFTER_MS;
}

/** The provider's own error text (Auth0 `message`, Graph `error.message`, Descope `errorDescription`), shortened. */
function errorDetail(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "";
  }
  const record = (parsed ?? {}) as Record<string, unknown>;
  const nested = (record.error ?? {}) as Record<string, unknown>;
  const candidates = [
    record.message,
    record.errorDescription,
    record.error_description,
    typeof nested === "object" ? nested.message : undefined,
    typeof record.error === "string" ? record.error : undefined,
  ];
  const message = candidates.find((c): c is string => typeof c === "string" && c !== "");
  return message === undefined ? "" : `: ${message.slice(0, 200)}`;
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within the provider's timeout (${timeoutMs / 1000} s)`;
  }
  return `unreachable (${error instanceof Error ? error.message : String(error)})`;
}
