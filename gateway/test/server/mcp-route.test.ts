// /{server}/mcp is served two ways: a plain request target straight on node:http (mcp-route.ts), anything else
// through Hono's route. Both must run the same pipeline and answer alike.

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initializeRequest } from "svc-testkit/json-rpc";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { plainMcpServer } from "../../src/server/mcp-route.ts";
import { type RunningGateway, startGateway } from "../../src/server/start-gateway.ts";
import { configYaml, TEST_GATEWAY_ENV } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const target = (url: string, host = "127.0.0.1:8080") =>
  plainMcpServer({ url, headers: { host } } as unknown as IncomingMessage);

describe("which requests take the direct route", () => {
  test("a plain /{server}/mcp, with or without a query", () => {
    expect(target("/a/mcp")).toBe("a");
    expect(target("/fast-json_2.x/mcp?x=1&y=/z")).toBe("fast-json_2.x");
  });

  test("anything a URL parser would rewrite goes to Hono", () => {
    expect(target("/%61/mcp")).toBeUndefined();
    expect(target("/../mcp")).toBeUndefined();
    expect(target("/./mcp")).toBeUndefined();
    expect(target("/a/mcp/")).toBeUndefined();
    expect(target("/a/b/mcp")).toBeUndefined();
    expect(target("/a/mcp?q=%20")).toBeUndefined();
    expect(target("http://127.0.0.1/a/mcp")).toBeUndefined();
    expect(target("/a/mcp", "LOCALHOST")).toBeUndefined();
    expect(target("/a/mcp", "[::1]:8080")).toBeUndefined();
  });
});

describe("both routes answer alike", () => {
  let dir: string;
  let upstream: Upstream;
  let gateway: RunningGateway;

  beforeAll(async () => {
    upstream = await startUpstream({ jsonResponse: true });
    dir = await mkdtemp(join(tmpdir(), "svc-gw-mcp-route-"));
    await writeFile(join(dir, "config.yaml"), configYaml([{ name: "a", url: upstream.url }]));
    gateway = await startGateway({
      configPath: join(dir, "config.yaml"),
      host: "127.0.0.1",
      port: 0,
      env: TEST_GATEWAY_ENV,
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function post(path: string) {
    const response = await request(`${gateway.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(initializeRequest()),
    });
    const body = await response.body.text();
    return { status: response.statusCode, headers: response.headers, body };
  }

  test("the direct route and Hono's (a percent-encoded name) reach the same server with the same answer", async () => {
    const direct = await post("/a/mcp");
    const viaHono = await post("/%61/mcp");
    expect(direct.status).toBe(200);
    expect(viaHono.status).toBe(200);
    expect(JSON.parse(direct.body)).toEqual(JSON.parse(viaHono.body));
    for (const answer of [direct, viaHono]) {
      expect(answer.headers["content-type"]).toMatch(/^application\/json/);
      expect(Number(answer.headers["content-length"])).toBe(Buffer.byteLength(answer.body));
      expect(answer.headers["x-request-id"]).toBeTypeOf("string");
    }
  });

  test("refusals are the same on both routes", async () => {
    const direct = await post("/nope/mcp");
    const viaHono = await post("/%6Eope/mcp");
    expect(direct.status).toBe(404);
    expect(viaHono.status).toBe(404);
    expect(JSON.parse(direct.body).error.code).toBe(JSON.parse(viaHono.body).error.code);
  });

  test("a refused request whose body never ends gets its answer, then loses the connection instead of holding it", async () => {
    const { hostname, port } = new URL(gateway.url);
    const socket = connect(Number(port), hostname);
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk.toString();
    });
    const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now())));
    // Declares 1 MB and sends 1 KB: a 404 refuses it unread, and the rest never comes.
    socket.write(
      `POST /nope/mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
        `content-length: 1000000\r\n\r\n${"x".repeat(1024)}`,
    );
    const start = Date.now();
    const end = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 404 /);
    expect(end - start).toBeLessThan(10_000);
  });
});
