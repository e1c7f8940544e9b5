import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

// The loopback HTTP server under each management API fake: routes requests to the fake's handler, counts them by
// route, and lets a test make the provider answer 429 (with the provider's own rate-limit headers and body) or go
// down (refusing connections is slow to set up, so "down" answers 503 the way a provider behind a balancer does).

export interface FakeAnswer {
  status: number;
  json: unknown;
  headers?: Record<string, string>;
}

export interface FakeRequest {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeApi {
  url: string;
  /** Requests per route name the handler gave. */
  calls: Map<string, number>;
  /** The next request on a route other than the token endpoint answers this (once). */
  answerNextOnce(answer: FakeAnswer): void;
  /** While true, every request answers 503. */
  down: boolean;
  close(): Promise<void>;
}

export type FakeRoute = (request: FakeRequest) => { route: string; answer: FakeAnswer };

export async function startFakeApi(handle: FakeRoute, tokenRoute = "token"): Promise<FakeApi> {
  let once: FakeAnswer | undefined;
  const api: FakeApi = {
    url: "",
    calls: new Map(),
    answerNextOnce: (answer) => {
      once = answer;
    },
    down: false,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request: FakeRequest = {
      method: req.method ?? "GET",
      url: new URL(req.url ?? "/", api.url),
      headers: req.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    };
    let { route, answer } = handle(request);
    api.calls.set(route, (api.calls.get(route) ?? 0) + 1);
    if (api.down) answer = { status: 503, json: { message: "Service Unavailable" } };
    else if (once !== undefined && route !== tokenRoute) {
      answer = once;
      once = undefined;
    }
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
    res.end(JSON.stringify(answer.json));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}

export function bearerOf(request: FakeRequest): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith("Bearer ") === true ? header.slice("Bearer ".length) : undefined;
}
