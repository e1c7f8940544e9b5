// Turns what the Azure SDK threw into an operator's message and the receiver's Retry-After. The message names the
// cause (token endpoint refusal, HTTP status and error code, timeout, unreachable endpoint) and never the client
// secret: it is cut out of anything the SDK or the receiver echoed back.
import { MAX_RETRY_AFTER_MS, retryAfterMs } from "./retry-after.ts";

const MESSAGE_LIMIT = 500;

/** What @azure/identity throws when it could not get a token (MSAL's refusals arrive as AuthenticationRequiredError). */
const CREDENTIAL_ERRORS = new Set([
  "AuthenticationError",
  "AuthenticationRequiredError",
  "AggregateAuthenticationError",
  "CredentialUnavailableError",
]);

export interface SiemFailureContext {
  timedOut: boolean;
  timeoutSeconds: number;
  secret: string;
  tenantId: string;
  clientId: string;
}

export interface SiemFailure {
  message: string;
  retryAfterMs: number | undefined;
}

interface HeadersLike {
  get(name: string): string | undefined;
}

interface SdkError {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  statusCode?: unknown;
  errorResponse?: { error?: unknown; errorDescription?: unknown };
  response?: { headers?: HeadersLike };
}

export function describeSiemFailure(error: unknown, context: SiemFailureContext): SiemFailure {
  const sdkError = (typeof error === "object" && error !== null ? error : {}) as SdkError;
  const text = (value: unknown): string => redact(String(value ?? ""), context.secret);
  let message: string;
  if (context.timedOut) {
    message = `upload timed out after ${context.timeoutSeconds} s`;
  } else if (typeof sdkError.name === "string" && CREDENTIAL_ERRORS.has(sdkError.name)) {
    const refusal = sdkError.errorResponse;
    const detail =
      refusal?.error === undefined
        ? text(sdkError.message)
        : `${text(refusal.error)}: ${text(refusal.errorDescription)}`;
    const status = typeof sdkError.statusCode === "number" ? ` (HTTP ${sdkError.statusCode})` : "";
    // MSAL reports an unreachable or untrusted authority only by this code; say what it means.
    const hint = detail.includes("endpoints_resolution_error")
      ? " (the authority's OpenID metadata could not be fetched: network, DNS or TLS trust)"
      : "";
    message = `token request for tenant ${context.tenantId} as client ${context.clientId} failed${status}: ${detail}${hint}`;
  } else if (typeof sdkError.statusCode === "number") {
    const code = typeof sdkError.code === "string" ? ` ${text(sdkError.code)}` : "";
    message = `ingestion endpoint answered HTTP ${sdkError.statusCode}${code}: ${text(sdkError.message)}`;
  } else if (typeof sdkError.code === "string") {
    message = `ingestion endpoint unreachable (${text(sdkError.code)}): ${text(sdkError.message)}`;
  } else {
    message = `upload failed: ${error instanceof Error ? text(error.message) : text(error)}`;
  }
  return {
    message: message.length > MESSAGE_LIMIT ? `${message.slice(0, MESSAGE_LIMIT)}…` : message,
    retryAfterMs: azureRetryAfterMs(sdkError.response?.headers),
  };
}

function redact(text: string, secret: string): string {
  return secret === "" ? text : text.split(secret).join("<redacted>");
}

/** Azure sends `retry-after-ms` / `x-ms-retry-after-ms` (milliseconds) or the standard `Retry-After` (retry-after.ts). */
function azureRetryAfterMs(headers: HeadersLike | undefined): number | undefined {
  if (headers === undefined) return undefined;
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const milliseconds = Number(headers.get(name));
    if (headers.get(name) !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0)
      return Math.min(milliseconds, MAX_RETRY_AFTER_MS);
  }
  return retryAfterMs(headers.get("retry-after"));
}
