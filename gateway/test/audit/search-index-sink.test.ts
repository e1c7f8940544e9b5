import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { inspect } from "node:util";
import { afterEach, describe, expect, test } from "vitest";
import { type ChainedAuditEvent, completeEvent } from "../../src/audit/audit-event.ts";
import { searchIndexClient, searchIndexNodeOrigin } from "../../src/audit/exporters/search-index-client.ts";
import {
  type SearchIndexExporterConfig,
  searchIndexSink,
} from "../../src/audit/exporters/search-index-sink.ts";
import { HashChain } from "../../src/audit/hash-chain.ts";
import { type AuditSink, SinkWriteError } from "../../src/audit/sink.ts";
import { searchIndexExporterSchema } from "../../src/config/schema.ts";
import { SearchIndexReceiver } from "./receivers/search-index-receiver.ts";

const API_KEY = "VnVhQ2ZHY0JDZGJrUW0tZTVhT3g6dWkybHAyYXhUTm1zeWFrdzl0dk5udw==";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((thing) => thing.close()));
});

async function receiver(): Promise<SearchIndexReceiver> {
  const started = await SearchIndexReceiver.start({ apiKey: API_KEY });
  open.push(started);
  return started;
}

function config(fields: Record<string, unknown>): SearchIndexExporterConfig {
  return searchIndexExporterSchema.parse({ name: "audit-es", api_key: API_KEY, ...fields });
}

function sink(settings: SearchIndexExporterConfig): AuditSink {
  const made = searchIndexSink(settings);
  open.push({ close: async () => made.close?.() });
  return made;
}

function events(count: number, time = "2026-11-25T10:00:00.000Z", instance = "gw-1"): ChainedAuditEvent[] {
  const chain = new HashChain(instance);
  return Array.from({ length: count }, (_, i) =>
    chain.link(completeEvent({ kind: "call_completed", request_id: `r${i}`, status: 200, time }, "gw")),
  );
}

async function writeError(write: Promise<void>): Promise<SinkWriteError> {
  const error = await write.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SinkWriteError);
  return error as SinkWriteError;
}

describe("the search_index sink", () => {
  test("sends each event to its UTC day's index with _id = hash, ApiKey auth, NDJSON bulk", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url, index_prefix: "audit" }));
    // 23:30 at UTC-2 is 01:30 the next day in UTC: the index follows UTC.
    const late = events(2, "2026-11-25T23:30:00.000-02:00");
    const early = events(1, "2026-11-25T00:00:00.000Z", "gw-2");
    await audit.write([...late, ...early]);

    expect(audit.name).toBe("search_index:audit-es");
    expect(es.wireErrors).toEqual([]);
    expect(es.documents("audit-2026.11.26").map((doc) => doc.hash)).toEqual(late.map((event) => event.hash));
    expect(es.documents("audit-2026.11.25")).toEqual(early);
    expect([...(es.indices.get("audit-2026.11.26")?.keys() ?? [])]).toEqual(late.map((event) => event.hash));
    const bulk = es.requests.find((request) => request.path === "/_bulk");
    expect(bulk?.authorization).toBe(`ApiKey ${API_KEY}`);
    expect(bulk?.contentType).toMatch(/^application\/vnd\.elasticsearch\+x-ndjson/);
  });

  test("installs the index template once, before the first bulk, with the audit mapping", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url, index_prefix: "audit" }));
    await audit.write(events(2));
    await audit.write(events(3));

    expect(es.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "PUT /_index_template/audit-audit",
      "POST /_bulk",
      "POST /_bulk",
    ]);
    const template = es.templates.get("audit-audit") as {
      index_patterns: string[];
      template: { mappings: { properties: Record<string, { type: string }> } };
    };
    expect(template.index_patterns).toEqual(["audit-*"]);
    const types = Object.fromEntries(
      Object.entries(template.template.mappings.properties).map(([field, mapping]) => [field, mapping.type]),
    );
    expect(types).toMatchObject({
      time: "date",
      request_id: "keyword",
      instance: "keyword",
      hash: "keyword",
      prev_hash: "keyword",
      server: "keyword",
      subject: "keyword",
      seq: "long",
      status: "integer",
      latency_ms: "float",
    });
    // Every field of an event is mapped.
    expect(Object.keys(types).sort()).toEqual(Object.keys(events(1)[0] as object).sort());
  });

  test("a redelivered batch overwrites its documents instead of duplicating them", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    const batch = events(3);
    await audit.write(batch);
    await audit.write(batch);
    expect(es.received).toHaveLength(6);
    expect(es.documents("svc-gateway-2026.11.25")).toEqual(batch);
  });

  test("re-installs the template on the next write when installing it failed", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    es.failNext(1, 503);
    const error = await writeError(audit.write(events(1)));
    expect(error.message).toContain("installing index template 'svc-gateway-audit' failed with HTTP 503");
    expect(error.remaining).toBeUndefined();
    expect(es.received).toEqual([]);

    await audit.write(events(1));
    expect(es.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "PUT /_index_template/svc-gateway-audit",
      "PUT /_index_template/svc-gateway-audit",
      "POST /_bulk",
    ]);
    expect(es.received).toHaveLength(1);
  });

  test("item failures with retryable statuses come back as remaining, only those, in order", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    const batch = events(5);
    await audit.write(batch.slice(0, 0)); // an empty batch is a no-op, not a request
    es.failItemsNext((_, position) => (position === 1 ? 429 : position === 3 ? 503 : undefined));
    const error = await writeError(audit.write(batch));

    expect(error.permanent).toBe(false);
    expect(error.remaining).toEqual([batch[1], batch[3]]);
    expect(error.message).toContain("2 of 5 events not accepted, to retry");
    expect(es.received).toEqual([batch[0], batch[2], batch[4]]);

    await audit.write(error.remaining ?? []);
    expect(es.documents("svc-gateway-2026.11.25").map((doc) => doc.seq)).toEqual([0, 2, 4, 1, 3]);
  });

  test("a refused item beside retryable ones is named in the message and not retried", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    const batch = events(4);
    es.failItemsNext((_, position) => (position === 0 ? 400 : position === 2 ? 429 : undefined));
    const error = await writeError(audit.write(batch));
    expect(error.permanent).toBe(false);
    expect(error.remaining).toEqual([batch[2]]);
    expect(error.message).toContain(
      "1 refused for good and not retried (HTTP 400 document_parsing_exception",
    );
  });

  test("when only refused items are left, the error is permanent and names them", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    const batch = events(3);
    es.failItemsNext((_, position) => (position === 1 ? 400 : undefined));
    const error = await writeError(audit.write(batch));
    expect(error.permanent).toBe(true);
    expect(error.remaining).toEqual([batch[1]]);
    expect(error.message).toContain("1 of 3 events refused for good");
  });

  test("an event whose time is not a date is refused without being sent", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    const [good, bad] = events(2);
    const broken = { ...(bad as ChainedAuditEvent), time: "yesterday" };
    const error = await writeError(audit.write([good as ChainedAuditEvent, broken]));
    expect(error.permanent).toBe(true);
    expect(error.remaining).toEqual([broken]);
    expect(error.message).toContain("event time 'yesterday' is not a date");
    expect(es.received).toEqual([good]);
  });

  test("a 429 or 503 for the whole request hands the Retry-After on and leaves the whole batch", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    await audit.write(events(1)); // template installed
    es.failNext(1, 429, 7);
    const throttled = await writeError(audit.write(events(2)));
    expect(throttled.retryAfterMs).toBe(7000);
    expect(throttled.remaining).toBeUndefined();
    expect(throttled.permanent).toBe(false);
    expect(throttled.message).toContain("bulk request of 2 events failed with HTTP 429");

    es.failNext(1, 503, new Date(Date.now() + 60_000).toUTCString());
    const unavailable = await writeError(audit.write(events(2)));
    expect(unavailable.retryAfterMs).toBeGreaterThan(50_000);
    expect(unavailable.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  test("an attempt that gets no answer fails after the exporter's timeout, and the next one goes through", async () => {
    const es = await receiver();
    const audit = sink({ ...config({ url: es.url }), timeout: 0.5 });
    es.hangNext(1);
    const started = performance.now();
    const error = await writeError(audit.write(events(1)));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error.message).toContain("got no answer");
    expect(error.message).toContain("0.5 s timeout");

    await audit.write(events(1));
    expect(es.received).toHaveLength(1);
  });

  test("a receiver that is down fails the attempt; back on the same port, delivery resumes", async () => {
    const es = await receiver();
    const audit = sink(config({ url: es.url }));
    await es.down();
    const error = await writeError(audit.write(events(1)));
    expect(error.message).toContain(`could not reach ${es.url}`);
    await es.up();
    await audit.write(events(1));
    expect(es.received).toHaveLength(1);
  });

  test("a server that does not identify as Elasticsearch is named as such, and the batch is left to retry", async () => {
    const impostor = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"acknowledged":true}');
    });
    impostor.listen(0, "127.0.0.1");
    await once(impostor, "listening");
    open.push({
      close: async () => {
        const closed = once(impostor, "close");
        impostor.close();
        impostor.closeAllConnections();
        await closed;
      },
    });
    const url = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    const error = await writeError(sink(config({ url })).write(events(1)));
    expect(error.message).toContain(`the server at ${url} did not identify as Elasticsearch`);
    expect(error.remaining).toBeUndefined();
    expect(error.permanent).toBe(false);
  });

  test("secrets never appear in errors: a refused key, an unreachable node, credentials in the url", async () => {
    const es = await SearchIndexReceiver.start({ apiKey: "the-right-key" });
    open.push(es);
    const refused = await writeError(sink(config({ url: es.url })).write(events(1)));
    expect(refused.message).toContain("HTTP 401 (the api_key was refused)");
    expect(es.requests[0]?.authorization).toBe(`ApiKey ${API_KEY}`);

    await es.down();
    const withPassword = new URL(es.url);
    withPassword.username = "elastic";
    withPassword.password = "s3cret-pass";
    const unreachable = await writeError(sink(config({ url: withPassword.href })).write(events(1)));
    expect(unreachable.message).toContain("could not reach");

    for (const error of [refused, unreachable]) {
      const everything = `${error.message}\n${inspect(error, { depth: 10 })}`;
      expect(everything).not.toContain(API_KEY);
      expect(everything).not.toContain("s3cret-pass");
    }
  });
});

describe("the search_index client", () => {
  test("derives the node URL from cloud_id", () => {
    const encoded = Buffer.from("us-east-1.aws.found.io:9243$abc123$kibana456").toString("base64");
    const client = searchIndexClient(config({ cloud_id: `my-deployment:${encoded}` }));
    open.push(client);
    expect(searchIndexNodeOrigin(client)).toBe("https://abc123.us-east-1.aws.found.io:9243");

    const standardPort = Buffer.from("eu-west-1.aws.found.io$def456").toString("base64");
    const other = searchIndexClient(config({ cloud_id: `other:${standardPort}` }));
    open.push(other);
    expect(searchIndexNodeOrigin(other)).toBe("https://def456.eu-west-1.aws.found.io");
  });

  test("a cloud_id that does not decode is an error naming the exporter and the field", () => {
    expect(() => searchIndexClient(config({ cloud_id: "no-colon-here" }))).toThrow(
      /^search_index exporter 'audit-es': cloud_id is not usable: Cloud ID must be in the format/,
    );
    const oneUrl = Buffer.from("only-one-part").toString("base64");
    expect(() => searchIndexClient(config({ cloud_id: `name:${oneUrl}` }))).toThrow(/cloud_id is not usable/);
  });
});
