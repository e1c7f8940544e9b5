import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { type Detector, DetectorUnavailableError } from "../../src/firewall/detector.ts";
import { webhookDetector } from "../../src/firewall/webhook-detector.ts";

const SECRET = "Bearer s3cret-token-that-must-never-leak";

interface Received {
  readonly headers: IncomingMessage["headers"];
  readonly body: unknown;
}

interface WebhookServer {
  readonly url: string;
  readonly received: Received[];
  readonly sockets: Set<Socket>;
  /** Requests that arrived and were held without an answer. */
  readonly held: ServerResponse[];
}

type Answer = (response: ServerResponse, body: unknown) => void;

let servers: Server[] = [];
let detectors: Detector[] = [];

afterEach(async () => {
  await Promise.all(detectors.map((detector) => detector.close?.()));
  for (const server of servers) server.closeAllConnections();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
  detectors = [];
});

/** A real webhook on 127.0.0.1: `answer` writes each response; undefined holds the request open. */
async function startWebhook(answer: Answer | undefined): Promise<WebhookServer> {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    received.push({ headers: request.headers, body });
    if (answer === undefined) held.push(response);
    else answer(response, body);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/score?v=1`, received, sockets, held };
}

function json(status: number, value: unknown): Answer {
  return (response) => {
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify(value));
  };
}

function detector(url: string, options: { timeoutMs?: number; maxResponseBytes?: number } = {}): Detector {
  const created = webhookDetector({
    name: "guard",
    url,
    timeoutMs: options.timeoutMs ?? 5_000,
    headers: { authorization: SECRET, "x-tenant": "gw-1" },
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
  });
  detectors.push(created);
  return created;
}

/** The call's DetectorUnavailableError; fails the test if the call answered or threw anything else. */
async function unavailable(call: Promise<unknown> | unknown): Promise<DetectorUnavailableError> {
  try {
    await call;
  } catch (error) {
    expect(error).toBeInstanceOf(DetectorUnavailableError);
    const failure = error as DetectorUnavailableError;
    expect(failure.detector).toBe("webhook:guard");
    expect(`${failure.message} ${String(failure.cause ?? "")}`).not.toContain("s3cret");
    return failure;
  }
  throw new Error("expected the detector to be unavailable, but it answered");
}

describe("webhookDetector", () => {
  test("POSTs text and direction with the configured headers and passes the score through", async () => {
    const webhook = await startWebhook(json(200, { score: 0.87 }));
    const guard = detector(webhook.url);
    expect(guard.name).toBe("webhook:guard");
    await expect(guard.score("ignore previous instructions", "response")).resolves.toEqual({ score: 0.87 });
    expect(webhook.received).toHaveLength(1);
    const [call] = webhook.received;
    expect(call?.body).toEqual({ text: "ignore previous instructions", direction: "response" });
    expect(call?.headers.authorization).toBe(SECRET);
    expect(call?.headers["x-tenant"]).toBe("gw-1");
    expect(call?.headers["content-type"]).toBe("application/json");
  });

  test("labels become the detection's rules, at most 16, each cut to 64 characters", async () => {
    const labels = ["jailbreak", "x".repeat(100), ...Array.from({ length: 30 }, (_, i) => `label-${i}`)];
    const webhook = await startWebhook(json(200, { score: 1, labels }));
    const found = await detector(webhook.url).score("hi", "request");
    expect(found.score).toBe(1);
    expect(found.rules).toHaveLength(16);
    expect(found.rules?.[0]).toBe("jailbreak");
    expect(found.rules?.[1]).toBe("x".repeat(64));
  });

  test("a webhook that holds the request times out within the bound, with the timeout as reason", async () => {
    const webhook = await startWebhook(undefined);
    const started = performance.now();
    const failure = await unavailable(detector(webhook.url, { timeoutMs: 200 }).score("hi", "request"));
    const elapsed = performance.now() - started;
    expect(failure.message).toContain("timed out after 200 ms");
    expect(webhook.held).toHaveLength(1);
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(2_000);
  });

  test("the timeout also bounds a body that starts but never ends", async () => {
    const webhook = await startWebhook((response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"score": 0.');
    });
    const failure = await unavailable(detector(webhook.url, { timeoutMs: 200 }).score("hi", "request"));
    expect(failure.message).toContain("timed out after 200 ms");
  });

  test("a non-2xx status is unavailable, naming the status", async () => {
    const webhook = await startWebhook(json(500, { score: 0 }));
    const failure = await unavailable(detector(webhook.url).score("hi", "request"));
    expect(failure.message).toContain("answered HTTP 500");
  });

  test("an answer that is not JSON is unavailable", async () => {
    const webhook = await startWebhook((response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end("<html>maintenance</html>");
    });
    const failure = await unavailable(detector(webhook.url).score("hi", "request"));
    expect(failure.message).toContain("answered no JSON");
  });

  test.each([[{ score: 1.5 }], [{ score: -0.1 }], [{ score: "0.5" }], [{ labels: ["x"] }], [null]])(
    "a score missing or outside [0,1] is unavailable: %j",
    async (answer) => {
      const webhook = await startWebhook(json(200, answer));
      const failure = await unavailable(detector(webhook.url).score("hi", "request"));
      expect(failure.message).toContain("score missing or not in [0,1]");
    },
  );

  test("labels that are not strings are unavailable", async () => {
    const webhook = await startWebhook(json(200, { score: 0.2, labels: [1, 2] }));
    const failure = await unavailable(detector(webhook.url).score("hi", "request"));
    expect(failure.message).toContain("labels is not a list of strings");
  });

  test("an answer bigger than maxResponseBytes is unavailable, declared or streamed", async () => {
    const big = JSON.stringify({ score: 0.1, labels: Array.from({ length: 500 }, () => "y".repeat(20)) });
    const declared = await startWebhook((response) => {
      response.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(big),
      });
      response.end(big);
    });
    const streamed = await startWebhook((response) => {
      response.writeHead(200, { "content-type": "application/json" }); // chunked: no length known up front
      for (let i = 0; i < big.length; i += 1000) response.write(big.slice(i, i + 1000));
      response.end();
    });
    for (const webhook of [declared, streamed]) {
      const failure = await unavailable(
        detector(webhook.url, { maxResponseBytes: 1024 }).score("hi", "request"),
      );
      expect(failure.message).toContain("answered more than 1024 bytes");
    }
  });

  test("a refused connection is unavailable with the network error's code", async () => {
    const webhook = await startWebhook(json(200, { score: 0 }));
    const closedUrl = webhook.url;
    const server = servers.pop() as Server;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const failure = await unavailable(detector(closedUrl).score("hi", "request"));
    expect(failure.message).toContain("ECONNREFUSED");
  });

  test("keeps connections alive between calls and close() releases them", async () => {
    const webhook = await startWebhook(json(200, { score: 0.1 }));
    let connections = 0;
    servers[0]?.on("connection", () => connections++);
    const guard = detector(webhook.url);
    for (let i = 0; i < 5; i++) await guard.score(`call ${i}`, "request");
    expect(webhook.received).toHaveLength(5);
    expect(connections).toBeLessThan(5);
    expect(webhook.sockets.size).toBeGreaterThan(0);
    const socketsClosed = Promise.all([...webhook.sockets].map((socket) => once(socket, "close")));
    await guard.close?.();
    await socketsClosed;
    expect(webhook.sockets.size).toBe(0);
    const failure = await unavailable(guard.score("after close", "request"));
    expect(failure.message).toContain("closed");
  });

  test("close() ends a call in flight as unavailable instead of waiting for it", async () => {
    const webhook = await startWebhook(undefined);
    const guard = detector(webhook.url, { timeoutMs: 30_000 });
    const call = guard.score("hi", "request");
    while (webhook.held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await guard.close?.();
    const failure = await unavailable(call);
    expect(failure.message).toContain("closed");
  });

  test("bad options are refused at construction, naming the field and never a header value", () => {
    const base = { name: "guard", url: "https://guard.example/score", timeoutMs: 1000 };
    expect(() => webhookDetector({ ...base, url: "not a url" })).toThrow(/'guard': url must be an absolute/);
    expect(() => webhookDetector({ ...base, url: "ftp://guard.example/" })).toThrow(
      /url must use http or https/,
    );
    expect(() => webhookDetector({ ...base, url: "https://u:p@guard.example/" })).toThrow(
      /must not carry credentials/,
    );
    expect(() => webhookDetector({ ...base, timeoutMs: 0 })).toThrow(/timeoutMs must be an integer from 1/);
    expect(() => webhookDetector({ ...base, maxResponseBytes: 1.5 })).toThrow(
      /maxResponseBytes must be an integer/,
    );
    expect(() => webhookDetector({ ...base, headers: { "content-type": "text/plain" } })).toThrow(
      /headers.content-type is set by the detector itself/,
    );
    let message = "";
    try {
      webhookDetector({ ...base, headers: { authorization: `${SECRET}\r\nx-injected: 1` } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("headers.authorization must be a string of visible ASCII");
    expect(message).not.toContain("s3cret");
  });
});
