// What a client sees when something is wrong: unknown or disabled server, too large a body, a browser
// origin or host that is not allowed, and every way an upstream can fail.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer } from "node:net";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { connectClient, startTestGateway, type TestGateway } from "./support/gateway.ts";
import { startUpstream, type Upstream } from "./support/upstream.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  server.close();
  await once(server, "close");
  return port;
}

/** A test upstream in a child process, so the test can kill it mid-stream. */
async function spawnUpstream(): Promise<{ url: string; child: ChildProcess }> {
  const script = fileURLToPath(new URL("./support/upstream-process.ts", import.meta.url));
  const child = spawn(process.execPath, [script, JSON.stringify({ stateful: true })], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout as NodeJS.ReadableStream, "data")) as [Buffer];
  return { url: (JSON.parse(line.toString()) as { url: string }).url, child };
}

/** The SDK client's StreamableHTTPError carries the HTTP status as `code` and the body in the message. */
async function failure(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { code: (error as { code?: unknown }).code, message: (error as Error).message };
  }
  throw new Error("expected a failure");
}

let upstream: Upstream;
let jsonUpstream: Upstream;
let unauthorised: Upstream;
let broken: Upstream;
let stalling: HttpServer;
let quitter: HttpServer;
let crashing: { url: string; child: ChildProcess };
let gateway: TestGateway;

beforeAll(async () => {
  upstream = await startUpstream({ stateful: true });
  unauthorised = await startUpstream({ forceStatus: 401 });
  broken = await startUpstream({ forceStatus: 500 });
  // Sends JSON headers and half a body, then nothing.
  stalling = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
    res.write('{"jsonrpc":"2.0",');
  });
  await new Promise<void>((resolve) => stalling.listen(0, "127.0.0.1", resolve));
  // Answers with an SSE stream that ends cleanly, without event ids, before answering the request.
  quitter = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "bye" } })}\n\n`,
    );
  });
  await new Promise<void>((resolve) => quitter.listen(0, "127.0.0.1", resolve));
  crashing = await spawnUpstream();
  const down = `http://127.0.0.1:${await closedPort()}/mcp`;
  jsonUpstream = await startUpstream({ jsonResponse: true });
  afterAll(() => jsonUpstream.close());
  gateway = await startTestGateway(
    [
      { name: "up", url: upstream.url },
      { name: "json", url: jsonUpstream.url },
      { name: "off", url: upstream.url, enabled: false },
      { name: "down", url: down },
      { name: "locked", url: unauthorised.url, upstream_auth_type: "none" },
      { name: "broken", url: broken.url },
      { name: "quitter", url: `http://127.0.0.1:${(quitter.address() as { port: number }).port}/mcp` },
      { name: "stalling", url: `http://127.0.0.1:${(stalling.address() as { port: number }).port}/mcp` },
      { name: "keyed", url: upstream.url, upstream_auth_type: "api_key" },
      { name: "keyless", url: upstream.url, upstream_auth_type: "api_key" },
      { name: "crashy", url: crashing.url },
    ],
    {
      SVC_MAX_BODY_BYTES: "8192",
      SVC_UPSTREAM_TIMEOUT_SECONDS: "0.3",
      SVC_UPSTREAM_API_KEY_KEYED: "upstream-secret-1",
      SVC_ALLOWED_ORIGINS: "https://app.example.com",
    },
  );
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await unauthorised?.close();
  await broken?.close();
  stalling?.closeAllConnections();
  quitter?.close();
  stalling?.close();
  crashing?.child.kill("SIGKILL");
});

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  request(`${gateway.url}${path}`, { method: "POST", headers: { ...MCP_HEADERS, ...headers }, body });

describe("routing", () => {
  test("unknown server → 404 naming it", async () => {
    const response = await post("/nope/mcp", INITIALIZE);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toMatchObject({
      error: { code: "server_not_found", message: "No upstream server named 'nope' is configured" },
    });
  });

  test("disabled server → 404", async () => {
    const response = await post("/off/mcp", INITIALIZE);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toMatchObject({ error: { code: "server_disabled", server: "off" } });
  });

  test("the SDK client sees the 404 as a failed connect", async () => {
    const { code, message } = await failure(connectClient(`${gateway.url}/nope/mcp`));
    expect(code).toBe(404);
    expect(message).toContain("No upstream server named 'nope'");
  });

  test("other methods → 405 with Allow", async () => {
    const response = await request(`${gateway.url}/up/mcp`, { method: "PUT", body: "{}" });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe("GET, POST, DELETE");
    await response.body.text();
  });

  test("paths outside /{server}/mcp → 404", async () => {
    const response = await request(`${gateway.url}/up/other`);
    expect(response.statusCode).toBe(404);
    expect(await response.body.json()).toMatchObject({ error: { code: "path_not_found" } });
  });
});

describe("request limits and browser origins", () => {
  test("a body over SVC_MAX_BODY_BYTES → 413 (declared length)", async () => {
    const response = await post(
      "/up/mcp",
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "x", params: "a".repeat(9000) }),
    );
    expect(response.statusCode).toBe(413);
    expect(await response.body.json()).toMatchObject({ error: { code: "body_too_large" } });
  });

  test("a chunked body is cut off once it passes the limit → 413", async () => {
    async function* chunks() {
      yield Buffer.from('{"jsonrpc":"2.0","id":1,"method":"x","params":"');
      for (let i = 0; i < 20; i++) yield Buffer.from("b".repeat(1000));
      yield Buffer.from('"}');
    }
    const response = await request(`${gateway.url}/up/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: Readable.from(chunks()),
    });
    expect(response.statusCode).toBe(413);
    await response.body.text();
  });

  test("the SDK client calling with too large arguments gets the 413", async () => {
    const { client } = await connectClient(`${gateway.url}/up/mcp`);
    const { code, message } = await failure(
      client.callTool({ name: "echo", arguments: { text: "c".repeat(10_000) } }),
    );
    expect(code).toBe(413);
    expect(message).toContain("exceeds the limit of 8192 bytes");
    await client.close();
  });

  test("a foreign Origin → 403; a listed one and loopback ones pass", async () => {
    const refused = await post("/up/mcp", INITIALIZE, { origin: "https://evil.example" });
    expect(refused.statusCode).toBe(403);
    expect(await refused.body.json()).toMatchObject({ error: { code: "origin_not_allowed" } });
    for (const origin of ["https://app.example.com", "http://localhost:6274", "http://127.0.0.1:3000"]) {
      const allowed = await post("/json/mcp", INITIALIZE, { origin });
      expect(allowed.statusCode, origin).toBe(200);
      await allowed.body.text();
    }
  });

  test("an admitted browser origin gets CORS: a preflight answer, and headers it may read on every answer", async () => {
    const origin = "https://app.example.com";
    const preflight = await request(`${gateway.url}/json/mcp`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST" },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, POST, DELETE",
    });
    expect(preflight.headers["access-control-allow-headers"]).toContain("mcp-session-id");
    await preflight.body.text();
    const answer = await post("/json/mcp", INITIALIZE, { origin });
    expect(answer.headers["access-control-allow-origin"]).toBe(origin);
    expect(answer.headers["access-control-expose-headers"]).toContain("mcp-session-id");
    await answer.body.text();
    const failed = await post("/nope/mcp", INITIALIZE, { origin });
    expect(failed.statusCode).toBe(404);
    expect(failed.headers["access-control-allow-origin"]).toBe(origin);
    await failed.body.text();
    const plain = await post("/json/mcp", INITIALIZE);
    expect(plain.headers["access-control-allow-origin"]).toBeUndefined();
    await plain.body.text();
  });

  test("a non-loopback Host while bound to loopback (DNS rebinding) → 403", async () => {
    const response = await post("/up/mcp", INITIALIZE, { host: "rebound.evil.example" });
    expect(response.statusCode).toBe(403);
    expect(await response.body.json()).toMatchObject({ error: { code: "host_not_allowed" } });
  });
});

describe("upstream failures", () => {
  test("unreachable → 502 JSON-RPC error naming the server", async () => {
    const response = await post("/down/mcp", INITIALIZE);
    expect(response.statusCode).toBe(502);
    expect(await response.body.json()).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: {
        message: expect.stringContaining("Upstream server 'down' is unreachable"),
        data: { server: "down" },
      },
    });
  });

  test("upstream 5xx → 502 JSON-RPC error naming the server and the status", async () => {
    const response = await post("/broken/mcp", INITIALIZE);
    expect(response.statusCode).toBe(502);
    expect(await response.body.json()).toMatchObject({
      id: 1,
      error: {
        message: "Upstream server 'broken' failed with HTTP 500",
        data: { reason: "upstream_failed" },
      },
    });
  });

  test("the SDK client sees the 502 with the server's name", async () => {
    const { code, message } = await failure(connectClient(`${gateway.url}/down/mcp`));
    expect(code).toBe(502);
    expect(message).toContain("Upstream server 'down' is unreachable");
  });

  test("slow JSON answer → 504", async () => {
    const { client } = await connectClient(`${gateway.url}/json/mcp`);
    const { code, message } = await failure(client.callTool({ name: "slow", arguments: { ms: 1500 } }));
    expect(code).toBe(504);
    expect(message).toContain("Upstream server 'json' did not answer in time");
    await client.close();
  });

  test("a client that gives up is logged as 499, not counted as an upstream error", async () => {
    const controller = new AbortController();
    const seen = jsonUpstream.requests.length;
    const aborted = request(`${gateway.url}/json/mcp`, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "slow", arguments: { ms: 250 } },
      }),
      signal: controller.signal,
    }).catch(() => "aborted");
    // Abort only once the upstream holds the request, so it is the upstream wait that is abandoned.
    await expect.poll(() => jsonUpstream.requests.length).toBe(seen + 1);
    controller.abort();
    expect(await aborted).toBe("aborted");
    const metrics = () => request(`${gateway.url}/metrics`).then((response) => response.body.text());
    await expect
      .poll(metrics)
      .toContain('svc_gateway_requests_total{server="json",method="tools/call",status="499"} 1');
    expect(await metrics()).not.toContain('server="json",kind="unreachable"');
  });

  test("a JSON answer that stalls after its headers → 504", async () => {
    const response = await post("/stalling/mcp", INITIALIZE);
    expect(response.statusCode).toBe(504);
    expect(await response.body.json()).toMatchObject({
      id: 1,
      error: { data: { reason: "upstream_timeout" } },
    });
  });

  test("a stream that ends cleanly, unanswered and not resumable → JSON-RPC error event for the request", async () => {
    const response = await post("/quitter/mcp", INITIALIZE);
    expect(response.statusCode).toBe(200);
    const text = await response.body.text();
    expect(text).toContain('"notifications/message"'); // what the upstream did send is relayed first
    expect(text).toMatch(/data: \{"jsonrpc":"2.0","id":1,"error":\{[^\n]*"reason":"upstream_stream_aborted"/);
  });

  test("a stream that outlives the request timeout is not cut", async () => {
    const { client } = await connectClient(`${gateway.url}/up/mcp`);
    const result = await client.callTool({ name: "slow", arguments: { ms: 600 } });
    expect(result.content).toEqual([{ type: "text", text: "done" }]);
    await client.close();
  });

  test("upstream 401 → a clear JSON-RPC error saying upstream authorization is required", async () => {
    const response = await post("/locked/mcp", INITIALIZE, { authorization: "Bearer client-token" });
    expect(response.statusCode).toBe(502);
    const body = (await response.body.json()) as { error: { message: string; data: { reason: string } } };
    expect(body.error.message).toBe(
      "Upstream server 'locked' requires authorization (it answered HTTP 401); set upstream_auth_type for this server",
    );
    expect(body.error.data.reason).toBe("upstream_auth_required");
    expect(unauthorised.lastHeaders().authorization).toBeUndefined();
  });

  test("api_key: the key from SVC_UPSTREAM_API_KEY_<NAME> goes upstream, the client's token does not", async () => {
    const { client } = await connectClient(`${gateway.url}/keyed/mcp`, {
      headers: { authorization: "Bearer client-token" },
    });
    const result = await client.callTool({ name: "headers", arguments: {} });
    const seen = JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? "{}") as Record<
      string,
      string
    >;
    expect(seen.authorization).toBe("Bearer upstream-secret-1");
    await client.close();
  });

  test("api_key without its variable fails closed, naming the variable", async () => {
    const response = await post("/keyless/mcp", INITIALIZE);
    expect(response.statusCode).toBe(502);
    expect(((await response.body.json()) as { error: { message: string } }).error.message).toContain(
      "SVC_UPSTREAM_API_KEY_KEYLESS is not set",
    );
  });

  test("upstream killed mid-stream → the pending call gets a JSON-RPC error, not a hang", async () => {
    const { client } = await connectClient(`${gateway.url}/crashy/mcp`);
    let progressed: () => void = () => {};
    const gotProgress = new Promise<void>((resolve) => {
      progressed = resolve;
    });
    const call = client.callTool({ name: "gated", arguments: { steps: 1 } }, CallToolResultSchema, {
      onprogress: () => progressed(),
    });
    const outcome = call.then(
      () => "resolved",
      (error: Error) => error.message,
    );
    await gotProgress;
    crashing.child.kill("SIGKILL");
    expect(await outcome).toMatch(/Upstream server 'crashy' closed the stream before answering/);
    await client.close();
    const metrics = await (await request(`${gateway.url}/metrics`)).body.text();
    // The POST stream, and the session's GET stream when it was open, both died with the process.
    expect(metrics).toMatch(
      /svc_gateway_upstream_errors_total\{server="crashy",kind="stream_aborted"\} [12]\n/,
    );
  });
});
