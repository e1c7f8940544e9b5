// What a hostile upstream can cost a real gateway process (`svc-gateway start`): an SSE line that never ends, JSON
// answers of 50 MB, a declared Content-Length far over the limit, an error body that never ends. The upstream is a
// raw node:http server in this process (the MCP SDK server would never misbehave like this); the gateway runs
// with the default limits (8 MiB for a JSON answer and for one SSE event). Memory is the gateway's peak RSS
// from /proc, CPU its own event-loop delay gauge.
import { createHash } from "node:crypto";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { readSettings, SettingsError } from "../../src/server/settings.ts";
import { type SpawnedGateway, spawnGateway, writeGatewayConfig } from "../conformance/spawn-gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { connectClient } from "./support/gateway.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const MiB = 1024 * 1024;
const LIMIT = 8 * MiB; // the default of both SVC_MAX_UPSTREAM_RESPONSE_BYTES and SVC_MAX_SSE_EVENT_BYTES
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** One answer the hostile upstream streamed: how much it got to write, and whether its connection was cut. */
interface Flood {
  written: number;
  /** The connection closed before the upstream finished writing: the gateway dropped it. */
  cut: boolean;
}

const floods = new Map<string, Flood[]>();

function floodsOf(route: string): Flood[] {
  let list = floods.get(route);
  if (list === undefined) {
    list = [];
    floods.set(route, list);
  }
  return list;
}

const FILLER = Buffer.alloc(64 * 1024, "a");

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** Writes `head`, then `size` filler bytes, then `tail`, as fast as the reader takes them; stops when cut. */
async function stream(
  res: ServerResponse,
  route: string,
  head: string,
  size: number,
  tail = "",
): Promise<void> {
  const flood: Flood = { written: 0, cut: false };
  floodsOf(route).push(flood);
  res.once("close", () => {
    if (!res.writableFinished) flood.cut = true;
  });
  const write = async (chunk: Buffer | string): Promise<boolean> => {
    if (flood.cut || res.destroyed) return false;
    flood.written += Buffer.byteLength(chunk);
    if (!res.write(chunk)) await drainedOrClosed(res);
    return !res.destroyed;
  };
  if (!(await write(head))) return;
  for (let sent = 0; sent < size; sent += FILLER.length) {
    if (!(await write(FILLER.subarray(0, Math.min(FILLER.length, size - sent))))) return;
  }
  if (tail !== "" && !(await write(tail))) return;
}

async function readJson(req: IncomingMessage): Promise<{ id?: number; method?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString() || "{}");
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
}

const initializeResult = (id: number | undefined) => ({
  jsonrpc: "2.0",
  id,
  result: {
    protocolVersion: "2025-06-18",
    capabilities: { tools: {} },
    serverInfo: { name: "hostile", version: "1" },
  },
});

/** The body of an allowed answer of exactly LIMIT bytes, as the upstream sends it (and the client must get). */
function exactAnswer(id: number): Buffer {
  const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  return Buffer.from(head + "x".repeat(LIMIT - head.length - tail.length) + tail);
}

/** Just enough MCP for each misbehaviour: the path names the server, the JSON-RPC method what it does. */
async function hostile(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const route = (req.url ?? "").split("/")[1] ?? "";
  if (req.method !== "POST") {
    res.writeHead(405).end();
    return;
  }
  const message = await readJson(req);
  if (message.id === undefined) {
    res.writeHead(202).end(); // notifications
    return;
  }
  const sse = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  switch (`${route} ${message.method}`) {
    case "endless-line initialize":
      // 20 MB of one `data:` line that never ends, and then the connection stays open: only the limit ends it.
      res.writeHead(200, sse);
      await stream(res, route, "data: ", 20 * MiB);
      return;
    case "big-event initialize": {
      // One event just under the limit, then the answer: both must arrive whole.
      res.writeHead(200, sse);
      const text = "y".repeat(LIMIT - 200);
      res.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: text } })}\n\n`,
      );
      res.end(`event: message\ndata: ${JSON.stringify(initializeResult(message.id))}\n\n`);
      return;
    }
    case "huge-json tools/call":
      res.writeHead(200, { "content-type": "application/json" }); // no Content-Length: chunked
      await stream(
        res,
        route,
        `{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`,
        50 * MiB,
        '"}]}}',
      );
      res.end();
      return;
    case "declared-json tools/call":
      // Declares 50 MB and sends nothing: the gateway must refuse on the header alone.
      res.writeHead(200, { "content-type": "application/json", "content-length": String(50 * MiB) });
      res.flushHeaders();
      await stream(res, route, "", 0); // writes nothing; records when the connection is cut
      return;
    case "exact-json tools/call":
      res.writeHead(200, { "content-type": "application/json" });
      res.end(exactAnswer(message.id ?? 0));
      return;
    case "broken-body tools/call":
      // A 500 whose body never ends: the gateway answers 502 at once and must not keep the connection forever.
      res.writeHead(500, { "content-type": "text/plain" });
      await stream(res, route, "internal error: ", 10);
      return;
    case "plain initialize":
      res
        .writeHead(200, sse)
        .end(`event: message\ndata: ${JSON.stringify(initializeResult(message.id))}\n\n`);
      return;
    default:
      json(res, initializeResult(message.id));
  }
}

const cleanup = cleanupsAfterAll();
let upstream: Server;
let dir: string;
let config: string;
/** The gateway of the current describe block: each measured flood gets a fresh process. */
let gateway: SpawnedGateway;
let logFile: string;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    hostile(req, res).catch((error: unknown) => {
      res.destroy(error as Error);
    });
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  cleanup(async () => {
    upstream.closeAllConnections();
    upstream.close();
  });
  const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  dir = await mkdtemp(join(tmpdir(), "svc-gw-bounds-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const names = [
    "plain",
    "endless-line",
    "big-event",
    "huge-json",
    "declared-json",
    "exact-json",
    "broken-body",
  ];
  config = await writeGatewayConfig(
    dir,
    Object.fromEntries(names.map((name) => [name, `${base}/${name}/mcp`])),
  );
});

/**
 * A new gateway process for the describe block, warmed up with ordinary SSE and JSON exchanges, so that what a
 * test measures is the flood, not first-request costs (code compiled on first use) or an earlier test's garbage.
 */
function freshGatewayPerBlock(name: string): void {
  beforeAll(async () => {
    logFile = join(dir, `${name}.log`);
    gateway = await spawnGateway(config, {
      logFile,
      // Short, so the stalled error body is cut within the test; ample for reading 8 MiB on a loaded machine.
      env: { SVC_UPSTREAM_TIMEOUT_SECONDS: "5", SVC_AUDIT_FILE: "/dev/null" },
    });
    for (let i = 0; i < 20; i++) {
      await (await post("plain", { jsonrpc: "2.0", id: i, method: "initialize", params: {} })).body.text();
      await (await post("plain", toolsCall(i))).body.text();
    }
  });
  afterAll(() => gateway.stop());
}

const post = (server: string, body: unknown) =>
  request(`${gateway.url}/${server}/mcp`, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify(body),
  });

const toolsCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "anything", arguments: {} },
});

async function metrics(): Promise<string> {
  return (await request(`${gateway.url}/metrics`)).body.text();
}

async function eventLoopDelaySeconds(): Promise<number> {
  return Number(/^nodejs_eventloop_delay_max_seconds (\S+)$/m.exec(await metrics())?.[1]);
}

/** The gateway's memory from /proc, in bytes: current RSS, and the peak since the last resetPeak(). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${gateway.process.pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** Restarts the peak RSS count at the current RSS (Linux: "5" to clear_refs). */
function resetPeak(): void {
  writeFileSync(`/proc/${gateway.process.pid}/clear_refs`, "5");
}

/**
 * Runs `flood` and measures it: the gateway's peak RSS growth over it, and its event-loop delay gauge after it.
 * The gauge covers the last 10 to 20 s; whatever start-up left in it must have gone before the flood begins.
 */
async function measured<T>(flood: () => Promise<T>): Promise<{ result: T; growth: number; delay: number }> {
  await expect.poll(eventLoopDelaySeconds, { timeout: 30_000, interval: 250 }).toBeLessThan(0.2);
  resetPeak();
  const before = memory().rss;
  const result = await flood();
  return { result, growth: memory().peak - before, delay: await eventLoopDelaySeconds() };
}

async function health(): Promise<number> {
  const response = await request(`${gateway.url}/health`);
  await response.body.text();
  return response.statusCode;
}

describe("an SSE event over SVC_MAX_SSE_EVENT_BYTES", () => {
  freshGatewayPerBlock("sse");

  test("a 20 MB line without end: the client's initialize fails with upstream_answer_too_large, promptly, at bounded cost", async () => {
    const { result, growth, delay } = await measured(async () => {
      const response = await post("endless-line", {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      // While the upstream floods, the gateway keeps answering its own endpoints.
      await expect.poll(() => floodsOf("endless-line")[0]?.written ?? 0).toBeGreaterThan(MiB);
      const healthy = await health();
      return { status: response.statusCode, text: await response.body.text(), healthy };
    });
    expect(result.status).toBe(200); // the stream's head had gone out: the failure is an event on it
    expect(result.healthy).toBe(200);
    const events = result.text.split("\n\n").filter((event) => event !== "");
    expect(events).toHaveLength(1);
    const error = JSON.parse(events[0]?.replace(/^event: message\ndata: /, "") ?? "");
    expect(error).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32002,
        message: `Upstream server 'endless-line' sent an SSE event larger than the limit of ${LIMIT} bytes (SVC_MAX_SSE_EVENT_BYTES)`,
        data: { reason: "upstream_answer_too_large", server: "endless-line" },
      },
    });
    // The upstream connection was dropped once the limit passed, long before its 20 MB were out.
    const flood = floodsOf("endless-line")[0];
    await expect.poll(() => flood?.cut).toBe(true);
    expect(flood?.written).toBeLessThan(20 * MiB);
    // Held: at most one 8 MiB event (as the chunks it arrived in), plus 16 MiB for socket buffers and the garbage
    // collector's slack (measured: about 8 MiB in all). Holding the 20 MB line would not fit.
    expect(growth).toBeLessThan(24 * MiB);
    expect(delay).toBeLessThan(0.2);
  });

  test("it is counted as an upstream error of kind too_large and logged as a warning", async () => {
    expect(await metrics()).toContain(
      'svc_gateway_upstream_errors_total{server="endless-line",kind="too_large"} 1',
    );
    // Log lines leave in batches (every 50 ms): poll the file.
    const warnings = async () =>
      (await readFile(logFile, "utf8"))
        .split("\n")
        .filter((line) => line.includes('"upstream answer too large"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    await expect.poll(warnings).toEqual([
      expect.objectContaining({
        level: "warn",
        server: "endless-line",
        error: expect.stringContaining("larger than the limit of 8388608 bytes"),
      }),
    ]);
  });

  test("the MCP SDK client sees the failure as its initialize's error", async () => {
    await expect(connectClient(`${gateway.url}/endless-line/mcp`)).rejects.toThrow(
      /Upstream server 'endless-line' sent an SSE event larger than the limit of 8388608 bytes/,
    );
  });

  test("an event just under the limit, and the answer after it, pass whole", async () => {
    const response = await post("big-event", { jsonrpc: "2.0", id: 7, method: "initialize", params: {} });
    const events = (await response.body.text()).split("\n\n").filter((event) => event !== "");
    expect(events).toHaveLength(2);
    const notification = JSON.parse(events[0]?.replace(/^event: message\ndata: /, "") ?? "");
    expect(notification.params.data).toBe("y".repeat(LIMIT - 200));
    expect(JSON.parse(events[1]?.replace(/^event: message\ndata: /, "") ?? "")).toEqual(initializeResult(7));
  });
});

describe("a JSON answer over SVC_MAX_UPSTREAM_RESPONSE_BYTES, and an endless error body", () => {
  freshGatewayPerBlock("json");

  test("four 50 MB answers at once: each client gets a 502 JSON-RPC error promptly, the gateway holds at most the limit of each", async () => {
    const { result, growth, delay } = await measured(async () => {
      const answers = [1, 2, 3, 4].map(async (id) => {
        const response = await post("huge-json", toolsCall(id));
        return { status: response.statusCode, body: (await response.body.json()) as object };
      });
      await expect.poll(() => floodsOf("huge-json").length).toBe(4);
      const healthy = await health();
      return { answers: await Promise.all(answers), healthy };
    });
    expect(result.healthy).toBe(200);
    for (const [index, answer] of result.answers.entries()) {
      expect(answer.status).toBe(502);
      expect(answer.body).toMatchObject({
        jsonrpc: "2.0",
        id: index + 1,
        error: {
          code: -32002,
          message: `Upstream server 'huge-json' sent an answer larger than the limit of ${LIMIT} bytes (SVC_MAX_UPSTREAM_RESPONSE_BYTES)`,
          data: { reason: "upstream_answer_too_large", server: "huge-json" },
        },
      });
    }
    for (const flood of floodsOf("huge-json")) {
      await expect.poll(() => flood.cut).toBe(true);
      expect(flood.written).toBeLessThan(50 * MiB);
    }
    // Four answers of at most 8 MiB each held at once (32 MiB), plus 32 MiB for socket buffers and the garbage
    // collector's slack (measured: about 33 MiB in all). Reading the four answers whole would be 200 MB.
    expect(growth).toBeLessThan(64 * MiB);
    expect(delay).toBeLessThan(0.2);
    expect(await metrics()).toContain(
      'svc_gateway_upstream_errors_total{server="huge-json",kind="too_large"} 4',
    );
  });

  test("a declared Content-Length over the limit is refused on the header alone", async () => {
    const response = await post("declared-json", toolsCall(9));
    expect(response.statusCode).toBe(502);
    expect(await response.body.json()).toMatchObject({
      id: 9,
      error: {
        message: `Upstream server 'declared-json' declared an answer of ${50 * MiB} bytes, over the limit of ${LIMIT} bytes (SVC_MAX_UPSTREAM_RESPONSE_BYTES)`,
        data: { reason: "upstream_answer_too_large" },
      },
    });
    await expect.poll(() => floodsOf("declared-json")[0]?.cut).toBe(true);
  });

  test("an answer of exactly the limit passes byte for byte", async () => {
    const response = await post("exact-json", toolsCall(11));
    expect(response.statusCode).toBe(200);
    const body = Buffer.from(await response.body.arrayBuffer());
    const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
    expect(body.length).toBe(LIMIT);
    expect(sha256(body)).toBe(sha256(exactAnswer(11)));
  });

  test("an error answer whose body never ends gets its 502 at once, and its connection is cut after SVC_UPSTREAM_TIMEOUT_SECONDS", async () => {
    const response = await post("broken-body", toolsCall(5));
    expect(response.statusCode).toBe(502);
    await response.body.text();
    await expect.poll(() => floodsOf("broken-body")[0]?.cut, { timeout: 20_000 }).toBe(true);
  });
});

describe("settings", () => {
  test("both limits default to 8 MiB and name their variable when wrong", () => {
    expect(readSettings({})).toMatchObject({ maxUpstreamResponseBytes: LIMIT, maxSseEventBytes: LIMIT });
    expect(readSettings({ SVC_MAX_SSE_EVENT_BYTES: "1024" }).maxSseEventBytes).toBe(1024);
    expect(() => readSettings({ SVC_MAX_UPSTREAM_RESPONSE_BYTES: "8MB" })).toThrow(
      new SettingsError("SVC_MAX_UPSTREAM_RESPONSE_BYTES must be a number from 1 to 1073741824, got '8MB'"),
    );
    expect(() => readSettings({ SVC_MAX_SSE_EVENT_BYTES: "0" })).toThrow(/^SVC_MAX_SSE_EVENT_BYTES must be/);
  });
});
