// The SSE relay's contract with both sockets, seen from outside through a real gateway and a raw node:http
// upstream whose every write the test controls: a client that stops reading holds the upstream back (and loses
// nothing when it reads again), the head reaches the client before any event does, several events in one
// upstream write all arrive with their ids, and drain ends an open GET stream on both sides.
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import { request } from "undici";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startTestGateway, type TestGateway } from "./support/gateway.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const CALL = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
const ANSWER = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [] } });

/** Far more than every socket buffer between upstream and client can hold (loopback buffers grow to a few MiB). */
const FLOOD_EVENTS = 4096;
const FLOOD_PAYLOAD = "x".repeat(16 * 1024);

function notification(data: string): string {
  return JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data } });
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** What the raw upstream did, per path, for the tests to look at. */
const seen = {
  floodBytes: 0,
  floodDone: false,
  releaseSilent: () => {},
  heldClosed: false,
};

function sseHead(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

async function flood(res: ServerResponse): Promise<void> {
  sseHead(res);
  for (let i = 0; i < FLOOD_EVENTS; i++) {
    const event = `id: ${i}\nevent: message\ndata: ${notification(FLOOD_PAYLOAD)}\n\n`;
    seen.floodBytes += event.length;
    // Like any well-behaved server: wait for "drain" when the socket's buffer is full.
    if (!res.write(event)) await once(res, "drain");
  }
  res.end(`id: ${FLOOD_EVENTS}\nevent: message\ndata: ${ANSWER}\n\n`);
  seen.floodDone = true;
}

function silent(res: ServerResponse): void {
  sseHead(res);
  res.flushHeaders();
  // Nothing until the test says so; then two events in one write, then the end.
  seen.releaseSilent = () =>
    res.end(
      `id: a\nevent: message\ndata: ${notification("first")}\n\nid: b\nevent: message\ndata: ${ANSWER}\n\n`,
    );
}

function held(res: ServerResponse): void {
  sseHead(res);
  res.write("id: primed\ndata: \n\n");
  res.once("close", () => {
    seen.heldClosed = true;
  });
}

let upstream: Server;
let gateway: TestGateway;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    if (req.url === "/flood") void flood(res);
    else if (req.url === "/silent") silent(res);
    else if (req.url === "/held") held(res);
    else res.writeHead(404).end();
  });
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const base = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;
  gateway = await startTestGateway(
    ["flood", "silent", "held"].map((name) => ({ name, url: `${base}/${name}` })),
    { SVC_DRAIN_DELAY_SECONDS: "0" },
  );
});

afterAll(async () => {
  await gateway?.close();
  upstream?.closeAllConnections();
  upstream?.close();
});

test("a client that stops reading holds the upstream back; reading again, it gets every event in order", async () => {
  const response = await request(`${gateway.url}/flood/mcp`, {
    method: "POST",
    headers: MCP_HEADERS,
    body: CALL,
  });
  expect(response.statusCode).toBe(200);
  // Not reading the body: the upstream must come to a stop well short of the whole stream.
  let last = -1;
  let still = 0;
  await waitFor(() => {
    still = seen.floodBytes === last ? still + 1 : 0;
    last = seen.floodBytes;
    return still >= 30 || seen.floodDone;
  }, "the upstream to stop writing");
  expect(seen.floodDone).toBe(false);
  expect(seen.floodBytes).toBeLessThan((FLOOD_EVENTS * FLOOD_PAYLOAD.length) / 2);

  const text = await response.body.text();
  expect(seen.floodDone).toBe(true);
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
  expect(ids).toEqual(Array.from({ length: FLOOD_EVENTS + 1 }, (_, i) => i));
  expect(text.endsWith(`data: ${ANSWER}\n\n`)).toBe(true);
});

test("the head reaches the client before any event; events sent in one write arrive whole, ids kept", async () => {
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error("no head while the upstream sent no event")), 5000),
  );
  const response = await Promise.race([
    request(`${gateway.url}/silent/mcp`, { method: "POST", headers: MCP_HEADERS, body: CALL }),
    timeout,
  ]);
  expect(response.statusCode).toBe(200);
  expect(response.headers["content-type"]).toBe("text/event-stream");
  seen.releaseSilent();
  expect(await response.body.text()).toBe(
    `event: message\nid: a\ndata: ${notification("first")}\n\nevent: message\nid: b\ndata: ${ANSWER}\n\n`,
  );
  // The status the relay wrote is the one the access log and metrics recorded.
  const metrics = await (await request(`${gateway.url}/metrics`)).body.text();
  expect(metrics).toContain('svc_gateway_requests_total{server="silent",method="tools/call",status="200"} 1');
});

// Last: drain shuts this gateway down.
test("drain ends an open GET stream: the client's response ends and the upstream sees the disconnect", async () => {
  const response = await request(`${gateway.url}/held/mcp`, { headers: { accept: "text/event-stream" } });
  expect(response.statusCode).toBe(200);
  const body = response.body.text();
  await waitFor(
    async () =>
      (await (await request(`${gateway.url}/metrics`)).body.text()).includes(
        'svc_gateway_open_streams{server="held"} 1',
      ),
    "the stream to be open",
  );
  const drained = gateway.gateway.drain();
  expect(await body).toBe("id: primed\ndata: \n\n");
  await waitFor(() => seen.heldClosed, "the upstream to see the disconnect");
  await drained;
});
