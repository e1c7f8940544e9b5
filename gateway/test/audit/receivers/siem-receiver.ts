// A loopback stand-in for Azure: the Microsoft identity platform's token endpoint (with the OpenID metadata MSAL reads
// first) and the Azure Monitor logs ingestion endpoint, on one HTTPS server with a self-signed certificate (both SDKs
// refuse plain HTTP: @azure/identity for the authority, the bearer token policy for the endpoint). It checks what the
// real clients send: the client-credentials form, `Authorization: Bearer <token it issued>`, the DCR path, a gzip body
// of JSON rows. It can be told to fail and to go down and come back on the same port. With `deferDecoding` (the bench)
// an authorised ingestion body is only kept and answered as accepted, and decodeDeferred() checks it later.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import selfsigned from "selfsigned";
import type { ChainedAuditEvent } from "../../../src/audit/audit-event.ts";
import { SIEM_COLUMNS, type SiemRow } from "../../../src/audit/exporters/siem-columns.ts";

const BODY_LIMIT = 4 * 1024 * 1024;
const MONITOR_SCOPE = "https://monitor.azure.com/.default";

export interface SiemReceiverOptions {
  tenantId?: string;
  clientId?: string;
  clientSecret?: string;
  dcrImmutableId?: string;
  streamName?: string;
}

/** One ingestion request as it arrived, for assertions on the wire format. */
export interface SiemIngestionRequest {
  path: string;
  apiVersion: string | null;
  authorization: string | undefined;
  contentEncoding: string | undefined;
  contentType: string | undefined;
  rows: SiemRow[];
}

export class SiemReceiver {
  /** The base URL: both the `dcr_endpoint` and the credential's authority host. */
  readonly url: string;
  /** The self-signed certificate (PEM), to trust in the client. */
  readonly ca: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly dcrImmutableId: string;
  readonly streamName: string;
  /** Accepted rows decoded back into events, in arrival order. */
  readonly received: ChainedAuditEvent[] = [];
  /** Every ingestion request that reached the handler (accepted or failed on purpose). */
  readonly ingestionRequests: SiemIngestionRequest[] = [];
  /** Token requests answered, successful or not. */
  tokenRequests = 0;
  /** Requests to paths neither SDK should call. */
  readonly unexpected: string[] = [];
  /**
   * An ingestion request with an issued token on the DCR stream is kept as it came and answered 204, costing the
   * sender's machine only the read (and TLS); decodeDeferred() checks and keeps its rows as the normal path would. A
   * planned failure or hang pending is answered as usual.
   */
  deferDecoding = false;
  /** Bodies that were answered as accepted but are not a (gzip of a) JSON array of objects. */
  readonly decodeErrors: string[] = [];
  private readonly deferred: { request: Omit<SiemIngestionRequest, "rows">; body: Buffer }[] = [];

  private readonly server: Server;
  private readonly port: number;
  private readonly issuedTokens = new Set<string>();
  private hanging = 0;
  private failures:
    | { skip: number; remaining: number; status: number; retryAfter: number | undefined }
    | undefined;

  private constructor(server: Server, ca: string, options: Required<SiemReceiverOptions>) {
    this.server = server;
    this.ca = ca;
    this.port = (server.address() as AddressInfo).port;
    this.url = `https://127.0.0.1:${this.port}`;
    this.tenantId = options.tenantId;
    this.clientId = options.clientId;
    this.clientSecret = options.clientSecret;
    this.dcrImmutableId = options.dcrImmutableId;
    this.streamName = options.streamName;
    server.on("request", (request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent)
          respond(response, 500, { error: { code: "ReceiverError", message: String(error) } });
      });
    });
  }

  static async start(options: SiemReceiverOptions = {}): Promise<SiemReceiver> {
    const pems = await selfsigned.generate([{ name: "commonName", value: "127.0.0.1" }], {
      keyType: "ec",
      curve: "P-256",
      extensions: [
        { name: "basicConstraints", cA: true },
        {
          name: "subjectAltName",
          altNames: [
            { type: 7, ip: "127.0.0.1" },
            { type: 2, value: "localhost" },
          ],
        },
      ],
    });
    const server = createServer({ key: pems.private, cert: pems.cert });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    return new SiemReceiver(server, pems.cert, {
      tenantId: options.tenantId ?? "00000000-0000-0000-0000-0000000000aa",
      clientId: options.clientId ?? "00000000-0000-0000-0000-0000000000bb",
      clientSecret: options.clientSecret ?? `secret-${randomBytes(12).toString("hex")}`,
      dcrImmutableId: options.dcrImmutableId ?? "dcr-0123456789abcdef0123456789abcdef",
      streamName: options.streamName ?? "Custom-SvcGateway_CL",
    });
  }

  /**
   * The next `count` ingestion requests are answered `status` (with `Retry-After: retryAfterSeconds` if given), after
   * `skip` more are accepted (to fail the second chunk of a large batch).
   */
  failNext(count: number, status: number, retryAfterSeconds?: number, skip = 0): void {
    this.failures = { skip, remaining: count, status, retryAfter: retryAfterSeconds };
  }

  /** The next `count` ingestion requests are read and never answered (until down() or close() drops them). */
  hangNext(count: number): void {
    this.hanging = count;
  }

  /** Stops accepting connections (and drops open ones), keeping the port for up(). */
  async down(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, "close");
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  /** Accepts connections again on the same port. */
  async up(): Promise<void> {
    if (this.server.listening) return;
    this.server.listen(this.port, "127.0.0.1");
    await once(this.server, "listening");
  }

  async close(): Promise<void> {
    await this.down();
  }

  /** Checks and keeps the bodies kept by `deferDecoding`; one that is not rows goes to decodeErrors. */
  decodeDeferred(): void {
    for (const { request, body } of this.deferred.splice(0)) {
      let rows: SiemRow[] | undefined;
      try {
        rows = rowsOf(request.contentEncoding, body);
      } catch (error) {
        this.decodeErrors.push(`ingestion body answered 204 does not decode: ${String(error)}`);
        continue;
      }
      if (rows === undefined) {
        this.decodeErrors.push("ingestion body answered 204 is not a JSON array of objects");
        continue;
      }
      this.ingestionRequests.push({ ...request, rows });
      for (const row of rows) this.received.push(eventFromRow(row));
    }
  }

  private async handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", this.url);
    const body = await readBody(request);
    const tenantPrefix = `/${this.tenantId}`;
    if (
      request.method === "GET" &&
      url.pathname === `${tenantPrefix}/v2.0/.well-known/openid-configuration`
    ) {
      respond(response, 200, {
        issuer: `${this.url}${tenantPrefix}/v2.0`,
        authorization_endpoint: `${this.url}${tenantPrefix}/oauth2/v2.0/authorize`,
        token_endpoint: `${this.url}${tenantPrefix}/oauth2/v2.0/token`,
        end_session_endpoint: `${this.url}${tenantPrefix}/oauth2/v2.0/logout`,
        jwks_uri: `${this.url}${tenantPrefix}/discovery/v2.0/keys`,
      });
      return;
    }
    if (request.method === "POST" && url.pathname === `${tenantPrefix}/oauth2/v2.0/token`) {
      this.answerToken(new URLSearchParams(body.toString("utf8")), response);
      return;
    }
    const ingestionPath = `/dataCollectionRules/${this.dcrImmutableId}/streams/${this.streamName}`;
    if (request.method === "POST" && url.pathname.startsWith("/dataCollectionRules/")) {
      this.answerIngestion(request, url, body, url.pathname === ingestionPath, response);
      return;
    }
    this.unexpected.push(`${request.method} ${url.pathname}`);
    respond(response, 404, { error: { code: "NotFound", message: `no such path ${url.pathname}` } });
  }

  private answerToken(form: URLSearchParams, response: ServerResponse): void {
    this.tokenRequests += 1;
    if (form.get("grant_type") !== "client_credentials" || form.get("scope") !== MONITOR_SCOPE) {
      respond(response, 400, {
        error: "invalid_request",
        error_description: `AADSTS900144: expected grant_type client_credentials and scope ${MONITOR_SCOPE}`,
      });
      return;
    }
    if (form.get("client_id") !== this.clientId || form.get("client_secret") !== this.clientSecret) {
      respond(response, 401, {
        error: "invalid_client",
        error_description: "AADSTS7000215: Invalid client secret provided.",
        error_codes: [7000215],
      });
      return;
    }
    const token = `token-${randomBytes(16).toString("hex")}`;
    this.issuedTokens.add(token);
    respond(response, 200, {
      token_type: "Bearer",
      expires_in: 3599,
      ext_expires_in: 3599,
      access_token: token,
    });
  }

  private answerIngestion(
    request: IncomingMessage,
    url: URL,
    body: Buffer,
    knownStream: boolean,
    response: ServerResponse,
  ): void {
    const authorization = request.headers.authorization;
    const token = authorization?.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : undefined;
    if (token === undefined || !this.issuedTokens.has(token)) {
      respond(response, 401, { error: { code: "InvalidToken", message: "missing or unknown bearer token" } });
      return;
    }
    if (!knownStream) {
      respond(response, 404, {
        error: { code: "NotFound", message: `unknown DCR or stream ${url.pathname}` },
      });
      return;
    }
    const seen = {
      path: url.pathname,
      apiVersion: url.searchParams.get("api-version"),
      authorization,
      contentEncoding: request.headers["content-encoding"],
      contentType: request.headers["content-type"],
    };
    if (this.deferDecoding && this.hanging === 0 && (this.failures?.remaining ?? 0) === 0) {
      this.deferred.push({ request: seen, body });
      response.writeHead(204).end();
      return;
    }
    const rows = rowsOf(seen.contentEncoding, body);
    if (rows === undefined) {
      respond(response, 400, {
        error: { code: "InvalidContent", message: "the body must be a JSON array of objects" },
      });
      return;
    }
    this.ingestionRequests.push({ ...seen, rows });
    if (this.hanging > 0) {
      this.hanging -= 1;
      return;
    }
    if (this.failures !== undefined && this.failures.skip > 0) {
      this.failures.skip -= 1;
    } else if (this.failures !== undefined && this.failures.remaining > 0) {
      const { status, retryAfter } = this.failures;
      this.failures.remaining -= 1;
      const headers: Record<string, string> =
        retryAfter === undefined ? {} : { "retry-after": String(retryAfter) };
      respond(response, status, { error: { code: `Failed${status}`, message: "told to fail" } }, headers);
      return;
    }
    for (const row of rows as SiemRow[]) this.received.push(eventFromRow(row));
    response.writeHead(204).end();
  }
}

/** The rows of an ingestion body, or undefined when it is not a (gzip of a) JSON array of objects. */
function rowsOf(contentEncoding: string | undefined, body: Buffer): SiemRow[] | undefined {
  const json = contentEncoding === "gzip" ? gunzipSync(body, { maxOutputLength: BODY_LIMIT }) : body;
  const rows = JSON.parse(json.toString("utf8")) as unknown;
  if (
    !Array.isArray(rows) ||
    rows.some((row) => typeof row !== "object" || row === null || Array.isArray(row))
  ) {
    return undefined;
  }
  return rows as SiemRow[];
}

function eventFromRow(row: SiemRow): ChainedAuditEvent {
  const event: Record<string, unknown> = {};
  for (const column of SIEM_COLUMNS) event[column.field] = row[column.name];
  return event as unknown as ChainedAuditEvent;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) throw new Error(`request body over ${BODY_LIMIT} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function respond(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}
