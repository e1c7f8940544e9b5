// A loopback stand-in for Elasticsearch that speaks what the official client sends for the search_index exporter:
// `PUT /_index_template/<name>` and `POST /_bulk` (NDJSON: one action line, one source line, a trailing newline,
// content-type application/vnd.elasticsearch+x-ndjson), answering with the `x-elastic-product: Elasticsearch` header
// the client insists on. Anything off the wire format is answered 400 and recorded in `wireErrors`, so a test that
// expects none catches it. It can be told to fail whole requests (status, Retry-After), fail single bulk items, hang,
// and go down and come back on the same port. With `deferDecoding` (the bench) a bulk body is only kept and answered as
// accepted, and decodeDeferred() checks and stores it later, out of the measured time.
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync, inflateSync } from "node:zlib";
import type { ChainedAuditEvent } from "../../../src/audit/audit-event.ts";

export interface ReceivedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  contentEncoding: string | undefined;
}

/** Chooses an item's status in a bulk request: a number fails that item with it, undefined accepts it. */
export type ItemFailurePicker = (event: ChainedAuditEvent, position: number) => number | undefined;

/** Bounds what a test can send, so a runaway test fails instead of exhausting memory. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const BULK_CONTENT_TYPE = /^application\/(vnd\.elasticsearch\+x-ndjson|x-ndjson)(;|$)/;
const JSON_CONTENT_TYPE = /^application\/(vnd\.elasticsearch\+json|json)(;|$)/;

export class SearchIndexReceiver {
  /** Documents accepted, in arrival order (a redelivery appears again). */
  readonly received: ChainedAuditEvent[] = [];
  /** Index name → `_id` → document: what a search would find (a redelivery overwrites). */
  readonly indices = new Map<string, Map<string, ChainedAuditEvent>>();
  /** Template name → body of every accepted template PUT. */
  readonly templates = new Map<string, unknown>();
  templatePuts = 0;
  readonly requests: ReceivedRequest[] = [];
  /** What was wrong with requests that broke the wire format. */
  readonly wireErrors: string[] = [];
  /**
   * Bulk bodies are kept as they came and answered as accepted (one item per action/source line pair), costing the
   * sender's machine only the read; decodeDeferred() checks and stores them. A receiver with an API key, a compressed
   * body or a planned failure pending answers as usual.
   */
  deferDecoding = false;
  readonly #deferred: { contentType: string | undefined; body: Buffer; answeredItems: number }[] = [];

  readonly #server: Server;
  readonly #apiKey: string | undefined;
  #port = 0;
  #failures: { status: number; retryAfter: string | undefined }[] = [];
  #itemFailures: ItemFailurePicker[] = [];
  #hangs = 0;
  readonly #hanging = new Set<ServerResponse>();

  private constructor(apiKey: string | undefined) {
    this.#apiKey = apiKey;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.#answer(res, 500, { error: { type: "receiver_error", reason: String(error) }, status: 500 });
      });
    });
  }

  /** Listens on 127.0.0.1 (an ephemeral port). With `apiKey`, requests without `Authorization: ApiKey <it>` get 401. */
  static async start(options: { apiKey?: string } = {}): Promise<SearchIndexReceiver> {
    const receiver = new SearchIndexReceiver(options.apiKey);
    await receiver.#listen(0);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  /** Documents of one index, in `_id` order of first arrival. */
  documents(index: string): ChainedAuditEvent[] {
    return [...(this.indices.get(index)?.values() ?? [])];
  }

  /** The next `count` requests (of any kind) are answered `status`, with Retry-After when given (seconds or date). */
  failNext(count: number, status: number, retryAfter?: number | string): void {
    const failure = { status, retryAfter: retryAfter === undefined ? undefined : String(retryAfter) };
    for (let i = 0; i < count; i++) this.#failures.push(failure);
  }

  /** The next `requests` bulk requests answer 200 with `errors: true` for the items `pick` chooses. */
  failItemsNext(pick: ItemFailurePicker, requests = 1): void {
    for (let i = 0; i < requests; i++) this.#itemFailures.push(pick);
  }

  /** The next `count` requests get no answer until the receiver goes down or closes. */
  hangNext(count: number): void {
    this.#hangs += count;
  }

  /** Stops accepting connections and drops open ones; the port stays reserved for `up`. */
  async down(): Promise<void> {
    if (!this.#server.listening) return;
    this.#dropHanging();
    const closed = once(this.#server, "close");
    this.#server.close();
    this.#server.closeAllConnections();
    await closed;
  }

  /** Accepts connections again on the same port. */
  async up(): Promise<void> {
    if (this.#server.listening) return;
    await this.#listen(this.#port);
  }

  async close(): Promise<void> {
    await this.down();
  }

  async #listen(port: number): Promise<void> {
    this.#server.listen(port, "127.0.0.1");
    await once(this.#server, "listening");
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  #dropHanging(): void {
    for (const res of this.#hanging) res.destroy();
    this.#hanging.clear();
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://receiver").pathname;
    const method = req.method ?? "GET";
    this.requests.push({
      method,
      path,
      authorization: req.headers.authorization,
      contentType: req.headers["content-type"],
      contentEncoding: req.headers["content-encoding"],
    });
    if (
      this.deferDecoding &&
      method === "POST" &&
      path === "/_bulk" &&
      req.headers["content-encoding"] === undefined &&
      this.#apiKey === undefined &&
      this.#failures.length + this.#itemFailures.length + this.#hangs === 0
    ) {
      await this.#deferBulk(req, res);
      return;
    }
    const body = await this.#body(req);
    if (this.#hangs > 0) {
      this.#hangs -= 1;
      this.#hanging.add(res);
      return;
    }
    if (this.#apiKey !== undefined && req.headers.authorization !== `ApiKey ${this.#apiKey}`) {
      this.#answer(res, 401, {
        error: { type: "security_exception", reason: "missing or wrong API key" },
        status: 401,
      });
      return;
    }
    const failure = this.#failures.shift();
    if (failure !== undefined) {
      const headers: Record<string, string> =
        failure.retryAfter === undefined ? {} : { "retry-after": failure.retryAfter };
      const type =
        failure.status === 429 ? "es_rejected_execution_exception" : "unavailable_shards_exception";
      this.#answer(
        res,
        failure.status,
        { error: { type, reason: "told to fail" }, status: failure.status },
        headers,
      );
      return;
    }
    if (method === "PUT" && path.startsWith("/_index_template/")) {
      this.#putTemplate(decodeURIComponent(path.slice("/_index_template/".length)), req, body, res);
    } else if ((method === "POST" || method === "PUT") && path === "/_bulk") {
      this.#bulk(req, body, res);
    } else if (method === "GET" && path === "/") {
      this.#answer(res, 200, {
        name: "receiver",
        version: { number: "9.0.0" },
        tagline: "You Know, for Search",
      });
    } else {
      this.#wireError(res, `unexpected ${method} ${path}`);
    }
  }

  #putTemplate(name: string, req: IncomingMessage, body: string, res: ServerResponse): void {
    if (!JSON_CONTENT_TYPE.test(req.headers["content-type"] ?? "")) {
      this.#wireError(res, `template PUT with content-type '${req.headers["content-type"]}'`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      this.#wireError(res, "template PUT body is not JSON");
      return;
    }
    this.templates.set(name, parsed);
    this.templatePuts += 1;
    this.#answer(res, 200, { acknowledged: true });
  }

  #bulk(req: IncomingMessage, body: string, res: ServerResponse): void {
    const parsed = parseBulk(req.headers["content-type"], body);
    if (typeof parsed === "string") {
      this.#wireError(res, parsed);
      return;
    }
    const pick = this.#itemFailures.shift();
    const items = parsed.map(({ index, id, event }, position) => {
      const status = pick?.(event, position);
      if (status !== undefined) {
        const type = status === 429 ? "es_rejected_execution_exception" : "document_parsing_exception";
        return {
          index: { _index: index, _id: id, status, error: { type, reason: `told to fail item ${position}` } },
        };
      }
      const result = this.#store(index, id, event);
      return { index: { _index: index, _id: id, status: result === "created" ? 201 : 200, result } };
    });
    const errors = items.some((item) => "error" in item.index);
    this.#answer(res, 200, { took: 1, errors, items });
  }

  #store(index: string, id: string, event: ChainedAuditEvent): "created" | "updated" {
    let documents = this.indices.get(index);
    if (documents === undefined) {
      documents = new Map();
      this.indices.set(index, documents);
    }
    const result = documents.has(id) ? "updated" : "created";
    documents.set(id, event);
    this.received.push(event);
    return result;
  }

  /** Keeps the body and answers one accepted item per line pair; the checks wait for decodeDeferred(). */
  async #deferBulk(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    let lines = 0;
    for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) lines += 1;
    const answeredItems = Math.floor(lines / 2);
    this.#deferred.push({ contentType: req.headers["content-type"], body, answeredItems });
    const item = { index: { status: 201, result: "created" } };
    this.#answer(res, 200, {
      took: 1,
      errors: false,
      items: Array.from({ length: answeredItems }, () => item),
    });
  }

  /** Checks and stores the bodies kept by `deferDecoding`, as the normal path would have; problems go to wireErrors. */
  decodeDeferred(): void {
    for (const { contentType, body, answeredItems } of this.#deferred.splice(0)) {
      const parsed = parseBulk(contentType, body.toString("utf8"));
      if (typeof parsed === "string") {
        this.wireErrors.push(`${parsed} (answered as ${answeredItems} accepted items)`);
        continue;
      }
      if (parsed.length !== answeredItems) {
        this.wireErrors.push(`bulk body of ${parsed.length} actions was answered as ${answeredItems} items`);
      }
      for (const { index, id, event } of parsed) this.#store(index, id, event);
    }
  }

  async #body(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
      chunks.push(chunk);
    }
    const raw = Buffer.concat(chunks);
    const encoding = req.headers["content-encoding"];
    const decoded = encoding === "gzip" ? gunzipSync(raw) : encoding === "deflate" ? inflateSync(raw) : raw;
    return decoded.toString("utf8");
  }

  #wireError(res: ServerResponse, problem: string): void {
    this.wireErrors.push(problem);
    this.#answer(res, 400, { error: { type: "illegal_argument_exception", reason: problem }, status: 400 });
  }

  #answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(status, {
      "content-type": "application/vnd.elasticsearch+json;compatible-with=9",
      "x-elastic-product": "Elasticsearch",
      ...headers,
    });
    res.end(JSON.stringify(body));
  }
}

/** A bulk request's index operations, or what is wrong with its framing (NDJSON action/source pairs). */
function parseBulk(
  contentType: string | undefined,
  body: string,
): { index: string; id: string; event: ChainedAuditEvent }[] | string {
  if (!BULK_CONTENT_TYPE.test(contentType ?? "")) return `bulk with content-type '${contentType}'`;
  if (!body.endsWith("\n")) return "bulk body does not end with a newline";
  const lines = body.slice(0, -1).split("\n");
  if (lines.length % 2 !== 0) return `bulk body has ${lines.length} lines, not action/source pairs`;
  const operations: { index: string; id: string; event: ChainedAuditEvent }[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    let action: { index?: { _index?: unknown; _id?: unknown } };
    let event: ChainedAuditEvent;
    try {
      action = JSON.parse(lines[i] as string);
      event = JSON.parse(lines[i + 1] as string);
    } catch {
      return `bulk lines ${i + 1}-${i + 2} are not JSON`;
    }
    const { _index, _id } = action.index ?? {};
    if (typeof _index !== "string" || typeof _id !== "string") {
      return `bulk line ${i + 1} is not an index action with _index and _id: ${lines[i]}`;
    }
    operations.push({ index: _index, id: _id, event });
  }
  return operations;
}
