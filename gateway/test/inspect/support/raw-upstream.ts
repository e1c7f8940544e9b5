// An upstream whose every byte the test chooses, on 127.0.0.1: what an odd or hostile MCP server sends, which an SDK
// server never would (answers with a string id for a numeric request, `Text/Event-Stream`, a byte order mark, HTML, a
// JSON-RPC error carrying an instruction, events of other types, comments with text, a GET stream replaying an
// earlier answer). Each scenario is a path, `/<scenario>/mcp`; `received` keeps every JSON-RPC body POSTed to it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

type Message = {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
};

/** A scenario's answer to one POSTed message (single message bodies only), or to a GET. */
export type Scenario = (
  message: Message | undefined,
  response: ServerResponse,
  request: IncomingMessage,
) => void;

export interface RawUpstream {
  /** The MCP endpoint of a scenario. */
  url(scenario: string): string;
  /** Bodies POSTed to a scenario, parsed, in order. */
  received(scenario: string): Message[];
  close(): Promise<void>;
}

export async function startRawUpstream(scenarios: Record<string, Scenario>): Promise<RawUpstream> {
  const received = new Map<string, Message[]>();
  const http: Server = createServer((request, response) => {
    const name = /^\/([^/]+)\/mcp/.exec(request.url ?? "")?.[1] ?? "";
    const scenario = scenarios[name];
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (scenario === undefined) {
        response.writeHead(404).end();
        return;
      }
      if (request.method !== "POST") {
        scenario(undefined, response, request);
        return;
      }
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Message;
      const list = received.get(name) ?? [];
      list.push(message);
      received.set(name, list);
      // Notifications are accepted, as any server does.
      if (message.id === undefined) {
        response.writeHead(202).end();
        return;
      }
      scenario(message, response, request);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: (scenario) => `${base}/${scenario}/mcp`,
    received: (scenario) => received.get(scenario) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** A JSON answer with exactly these bytes. */
export function sendJson(
  response: ServerResponse,
  body: string | Buffer,
  contentType = "application/json",
): void {
  response.writeHead(200, { "content-type": contentType }).end(body);
}

/** An SSE answer of these events (each `data` a JSON value, serialised), ending the stream. */
export function sendEvents(
  response: ServerResponse,
  events: string,
  contentType = "text/event-stream",
): void {
  response.writeHead(200, { "content-type": contentType, "cache-control": "no-cache" }).end(events);
}

export function sseEvent(data: unknown, id?: string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}event: message\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The ASCII of `text` spelt in invisible Unicode tag characters. */
export function tagCharacters(text: string): string {
  return [...text].map((char) => String.fromCodePoint(0xe0000 + char.charCodeAt(0))).join("");
}
