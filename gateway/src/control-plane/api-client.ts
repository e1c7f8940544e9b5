// The gateway's side of the control-plane API (operator/docs/control-plane.openapi.yaml): activation, the
// organization policy and (centralized mode) the whole configuration, each revalidated with If-None-Match and held
// open by the server as a long poll, and the heartbeat. The API key goes only in the Authorization header, to the
// configured URL; it is never logged. Every answer is bounded in size and time.
import { type Dispatcher, request } from "undici";
import type { ControlPlaneConfig } from "../config/schema.ts";

/** Largest answer read from the control plane; a larger one is refused (a configuration of many servers fits). */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

export type DocumentKind = "policy" | "configuration";

export type FetchResult = { status: "changed"; etag: string; body: unknown } | { status: "unchanged" };

export class ControlPlaneError extends Error {
  override readonly name = "ControlPlaneError";
  /** The HTTP status when the control plane answered; undefined when it could not be reached. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

export interface Activation {
  organization_id: string;
  gateway_id: string;
}

export class ControlPlaneClient {
  readonly #settings: ControlPlaneConfig;
  readonly #dispatcher: Dispatcher | undefined;
  #organizationId: string | undefined;

  constructor(settings: ControlPlaneConfig, dispatcher?: Dispatcher) {
    this.#settings = settings;
    this.#dispatcher = dispatcher;
    this.#organizationId = settings.organization_id;
  }

  get organizationId(): string | undefined {
    return this.#organizationId;
  }

  /** Says who we are; learns the organization when the configuration does not name it. */
  async activate(version: string): Promise<Activation> {
    const body = await this.#call("POST", "activation", {
      body: {
        version,
        ...(this.#organizationId === undefined ? {} : { organization_id: this.#organizationId }),
      },
    });
    const activation = body.json as Partial<Activation>;
    if (typeof activation?.organization_id !== "string" || activation.organization_id === "")
      throw new ControlPlaneError("the activation answer has no organization_id");
    if (this.#organizationId !== undefined && activation.organization_id !== this.#organizationId) {
      throw new ControlPlaneError(
        `the control plane places this gateway in organization ${activation.organization_id}, not ${this.#organizationId}`,
      );
    }
    this.#organizationId = activation.organization_id;
    return { organization_id: activation.organization_id, gateway_id: this.#settings.gateway_id };
  }

  /**
   * The current document when it differs from `etag`; the server holds the request up to `waitSeconds` for a change
   * (long poll) and answers 304 when there was none.
   */
  async fetch(kind: DocumentKind, etag: string | undefined, waitSeconds: number): Promise<FetchResult> {
    const answer = await this.#call("GET", `${kind}?wait=${waitSeconds}`, {
      ...(etag === undefined ? {} : { ifNoneMatch: etag }),
      extraSeconds: waitSeconds,
    });
    if (answer.status === 304) return { status: "unchanged" };
    if (answer.etag === undefined) throw new ControlPlaneError(`the ${kind} answer has no ETag`);
    return { status: "changed", etag: answer.etag, body: answer.json };
  }

  async heartbeat(report: Record<string, unknown>): Promise<void> {
    await this.#call("POST", "heartbeat", { body: report });
  }

  async #call(
    method: "GET" | "POST",
    path: string,
    options: { body?: unknown; ifNoneMatch?: string; extraSeconds?: number },
  ): Promise<{ status: number; etag: string | undefined; json: unknown }> {
    const url = new URL(
      `v1/gateways/${encodeURIComponent(this.#settings.gateway_id)}/${path}`,
      this.#settings.url.endsWith("/") ? this.#settings.url : `${this.#settings.url}/`,
    );
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.#settings.api_key}`,
      accept: "application/json",
    };
    if (this.#organizationId !== undefined) headers["x-svc-organization-id"] = this.#organizationId;
    if (options.ifNoneMatch !== undefined) headers["if-none-match"] = options.ifNoneMatch;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const timeoutMs = (this.#settings.timeout + (options.extraSeconds ?? 0)) * 1000;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(url, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        ...(this.#dispatcher === undefined ? {} : { dispatcher: this.#dispatcher }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new ControlPlaneError(`control plane unreachable: ${(error as Error).message}`);
    }
    const text = await readBounded(response.body, MAX_DOCUMENT_BYTES);
    const { statusCode } = response;
    if (statusCode === 304 || statusCode === 204)
      return { status: statusCode, etag: undefined, json: undefined };
    if (statusCode !== 200) {
      throw new ControlPlaneError(
        `control plane answered HTTP ${statusCode}: ${describeError(text)}`,
        statusCode,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ControlPlaneError("control plane answered with a body that is not JSON", statusCode);
    }
    const etag = response.headers.etag;
    return { status: statusCode, etag: typeof etag === "string" ? etag : undefined, json };
  }
}

async function readBounded(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      (body as { destroy?: () => void }).destroy?.();
      throw new ControlPlaneError(`control plane answer is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The error body's message (JSON `{ error }`), cut short: it is logged. */
function describeError(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === "string") return parsed.error.slice(0, 300);
  } catch {}
  return text.slice(0, 300) || "(no body)";
}
