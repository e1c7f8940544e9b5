// Headers across a real `svc-gateway start` process, both ways, against a hostile upstream (a raw node:http
// server: only there can an upstream set whatever it likes on the wire) and a hostile client. Upstream answers
// carry only the allow-listed headers; an upstream 403 becomes the gateway's own error, so its challenge cannot
// send an MCP client's OAuth flow to an attacker; the upstream never sees identity or forwarding headers the
// client made up, only the gateway's own X-Forwarded-*.

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { request } from "undici";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { type SpawnedGateway, spawnGateway, writeGatewayConfig } from "../conformance/spawn-gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });
const cleanup = cleanupsAfterAll();

/** Everything a hostile upstream might set to act for the gateway's origin, and one header nobody listed. */
function hostileHeaders(attackerUrl: string): Record<string, string> {
  return {
    "set-cookie": "sid=attacker; Path=/; HttpOnly",
    "www-authenticate": `Bearer error="insufficient_scope", scope="admin", resource_metadata="${attackerUrl}/.well-known/oauth-protected-resource"`,
    "access-control-allow-origin": "https://evil.example",
    "access-control-allow-credentials": "true",
    "strict-transport-security": "max-age=63072000; includeSubDomains; preload",
    "clear-site-data": '"*"',
    location: "https://evil.example/phish",
    refresh: "0; url=https://evil.example/phish",
    "alt-svc": 'h3="evil.example:443"; ma=86400',
    "content-security-policy": "default-src 'none'",
    "x-upstream-arbitrary": "leaked",
  };
}
const HOSTILE_NAMES = Object.keys(hostileHeaders("http://attacker"));

function expectNoneOf(headers: IncomingHttpHeaders, names: readonly string[]): void {
  const leaked = names.filter((name) => headers[name] !== undefined);
  expect(leaked).toEqual([]);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Counts every request: the attacker's metadata server must never hear from the client. */
async function startAttacker(): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ resource: "http://attacker", authorization_servers: ["http://attacker"] }));
  });
  return { url: await listen(server), requests: () => requests };
}

const RESULT = JSON.stringify({ jsonrpc: "2.0", id: 1, result: {} });

/**
 * One path per misbehaviour. Every answer carries the hostile headers; /echo also answers with the request headers
 * it received, which are kept by path for the tests.
 */
async function startHostileUpstream(
  attackerUrl: string,
): Promise<{ url: string; received: Map<string, IncomingHttpHeaders> }> {
  const hostile = hostileHeaders(attackerUrl);
  const received = new Map<string, IncomingHttpHeaders>();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const path = req.url ?? "/";
      received.set(path, req.headers);
      const common = { ...hostile, "mcp-session-id": "s-hostile", "cache-control": "no-store" };
      switch (path) {
        case "/json":
          res.writeHead(200, { ...common, "content-type": "application/json" }).end(RESULT);
          return;
        case "/sse":
          res.writeHead(200, { ...common, "content-type": "text/event-stream" });
          res.end(`event: message\ndata: ${RESULT}\n\n`);
          return;
        case "/forbidden":
          res.writeHead(403, { ...common, "content-type": "text/plain" }).end("upstream's own refusal page");
          return;
        case "/limited":
          res
            .writeHead(429, { ...common, "retry-after": "7", "content-type": "application/json" })
            .end(RESULT);
          return;
        case "/gzip":
          res
            .writeHead(200, { ...common, "content-type": "application/json", "content-encoding": "gzip" })
            .end(gzipSync(RESULT));
          return;
        default:
          res.writeHead(200, { "content-type": "application/json" }).end(RESULT);
      }
    });
  });
  return { url: await listen(server), received };
}

async function startGateway(
  upstreamUrl: string,
  env: Record<string, string> = {},
): Promise<SpawnedGateway & { host: string }> {
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-headers-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const paths = ["json", "sse", "forbidden", "limited", "gzip", "echo"];
  const config = await writeGatewayConfig(
    dir,
    Object.fromEntries(paths.map((path) => [path, `${upstreamUrl}/${path}`])),
  );
  const gateway = await spawnGateway(config, { env });
  cleanup(() => gateway.stop());
  return { ...gateway, host: new URL(gateway.url).host };
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });

let attacker: Awaited<ReturnType<typeof startAttacker>>;
let upstream: Awaited<ReturnType<typeof startHostileUpstream>>;
let gateway: SpawnedGateway & { host: string };

beforeAll(async () => {
  attacker = await startAttacker();
  upstream = await startHostileUpstream(attacker.url);
  gateway = await startGateway(upstream.url);
});

const post = (server: string, headers: Record<string, string> = {}) =>
  request(`${gateway.url}/${server}/mcp`, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: PING,
  });

describe("upstream response headers: an allow-list", () => {
  test("a 200 JSON answer: only the MCP headers reach the client", async () => {
    const response = await post("json");
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe(RESULT);
    expectNoneOf(response.headers, HOSTILE_NAMES);
    expect(response.headers["mcp-session-id"]).toBe("s-hostile");
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(response.headers["content-type"]).toBe("application/json");
  });

  test("an admitted browser origin gets the gateway's CORS, never the upstream's", async () => {
    const origin = "http://localhost:6274";
    const response = await post("json", { origin });
    await response.body.text();
    expect(response.headers["access-control-allow-origin"]).toBe(origin);
    expectNoneOf(
      response.headers,
      HOSTILE_NAMES.filter((name) => name !== "access-control-allow-origin"),
    );
  });

  test("an SSE answer: the head the relay writes carries none of them either", async () => {
    const response = await post("sse");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/event-stream");
    expect(await response.body.text()).toContain(RESULT);
    expectNoneOf(response.headers, HOSTILE_NAMES);
    expect(response.headers["mcp-session-id"]).toBe("s-hostile");
  });

  test("an upstream 403 becomes the gateway's own error: the upstream's body and challenge are discarded", async () => {
    const parsed = await post("forbidden");
    expect(parsed.statusCode).toBe(403);
    const text = await parsed.body.text();
    expect(text).not.toContain("refusal page");
    expect(JSON.parse(text)).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      error: {
        message: "Upstream server 'forbidden' refused the request (it answered HTTP 403)",
        data: { reason: "upstream_forbidden", server: "forbidden" },
      },
    });
    expectNoneOf(parsed.headers, HOSTILE_NAMES);
    expect(parsed.headers["mcp-session-id"]).toBeUndefined();

    const stream = await request(`${gateway.url}/forbidden/mcp`, {
      headers: { accept: "text/event-stream" },
    });
    expect(stream.statusCode).toBe(403);
    expect(await stream.body.json()).toMatchObject({
      id: null,
      error: { data: { reason: "upstream_forbidden" } },
    });
    expectNoneOf(stream.headers, HOSTILE_NAMES);
  });

  test("the MCP SDK client with an OAuth provider, refused upstream, never contacts the attacker", async () => {
    const provider: OAuthClientProvider = {
      redirectUrl: "http://127.0.0.1:1/callback",
      clientMetadata: { redirect_uris: ["http://127.0.0.1:1/callback"], client_name: "probe" },
      clientInformation: () => ({ client_id: "probe" }),
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: () => {},
      saveCodeVerifier: () => {},
      codeVerifier: () => "verifier",
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/forbidden/mcp`), {
      authProvider: provider,
    });
    const client = new Client({ name: "probe", version: "1.0.0" });
    const refused = await client.connect(transport).then(
      () => undefined,
      (error: unknown) => error as { code?: number },
    );
    await client.close();
    expect(attacker.requests()).toBe(0);
    expect(refused?.code).toBe(403);
  });

  test("other statuses pass (429 with Retry-After), with the allow-listed headers only", async () => {
    const response = await post("limited");
    expect(response.statusCode).toBe(429);
    expect(await response.body.text()).toBe(RESULT);
    expect(response.headers["retry-after"]).toBe("7");
    expectNoneOf(response.headers, HOSTILE_NAMES);
  });

  test("a compressed answer (not asked for) is a 502: no response policy could read it", async () => {
    const response = await post("gzip");
    expect(response.statusCode).toBe(502);
    expect(await response.body.json()).toMatchObject({
      id: 1,
      error: {
        message: expect.stringContaining("answered with Content-Encoding 'gzip'"),
        data: { reason: "upstream_failed", server: "gzip" },
      },
    });
    expect(response.headers["content-encoding"]).toBeUndefined();
  });
});

/** Identity and forwarding claims a client might make about itself, and a header nobody listed. */
const CLIENT_CLAIMS = {
  authorization: "Bearer client-token",
  cookie: "gw=1",
  "x-forwarded-user": "admin",
  "x-forwarded-email": "admin@example.com",
  "x-forwarded-groups": "admins",
  "x-remote-user": "admin",
  "x-auth-request-user": "admin",
  "x-auth-request-email": "admin@example.com",
  "remote-user": "admin",
  forwarded: "for=6.6.6.6;host=evil.example;proto=https",
  "x-forwarded-for": "6.6.6.6",
  "x-forwarded-host": "evil.example",
  "x-forwarded-proto": "https",
  "x-real-ip": "6.6.6.6",
  "x-correlation-id": "corr-1",
  "x-client-arbitrary": "dropped",
  "accept-encoding": "gzip, br",
};
const TRACE = {
  traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  tracestate: "vendor=1",
  baggage: "k=v",
};

describe("client request headers: an allow-list, and the gateway's own forwarding facts", () => {
  test("client-set identity and forwarding headers never reach the upstream; the gateway's X-Forwarded-* do", async () => {
    const response = await post("echo", { ...CLIENT_CLAIMS, ...TRACE, "mcp-protocol-version": "2025-11-25" });
    expect(response.statusCode).toBe(200);
    await response.body.text();
    const seen = upstream.received.get("/echo") ?? {};
    expectNoneOf(
      seen,
      Object.keys(CLIENT_CLAIMS).filter(
        (name) =>
          !["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "accept-encoding"].includes(name),
      ),
    );
    expect(seen).toMatchObject({
      ...TRACE,
      "mcp-protocol-version": "2025-11-25",
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-host": gateway.host,
      "x-forwarded-proto": "http",
      "accept-encoding": "identity",
    });
  });

  test("SVC_FORWARD_REQUEST_HEADERS adds a header; SVC_PUBLIC_URL names the forwarded proto and host", async () => {
    const extended = await startGateway(upstream.url, {
      SVC_FORWARD_REQUEST_HEADERS: "X-Correlation-Id",
      SVC_PUBLIC_URL: "https://mcp.example.com:8443/ignored/path",
    });
    const response = await request(`${extended.url}/echo/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...CLIENT_CLAIMS },
      body: PING,
    });
    await response.body.text();
    const seen = upstream.received.get("/echo") ?? {};
    expect(seen).toMatchObject({
      "x-correlation-id": "corr-1",
      "x-forwarded-for": "127.0.0.1",
      "x-forwarded-host": "mcp.example.com:8443",
      "x-forwarded-proto": "https",
    });
    expect(seen["x-forwarded-user"]).toBeUndefined();
    expect(seen["x-client-arbitrary"]).toBeUndefined();
  });

  test("svc-gateway start refuses SVC_FORWARD_REQUEST_HEADERS naming an identity header", async () => {
    await expect(
      startGateway(upstream.url, { SVC_FORWARD_REQUEST_HEADERS: "x-correlation-id, X-Remote-User" }),
    ).rejects.toThrow(/SVC_FORWARD_REQUEST_HEADERS: 'x-remote-user' looks like a credential or an identity/);
  });
});
