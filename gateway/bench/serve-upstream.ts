// The bench upstreams' process shell: serve `handle` on 127.0.0.1 (port from argv[2], default any), print the
// {"msg":"listening","url":...} line spawn-upstream.ts waits for, and stop on SIGTERM.
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request's whole body as text (the bench's requests are small JSON-RPC messages). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function serveUpstream(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<void> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.argv[2] ?? 0), "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: "listening", url: `http://127.0.0.1:${port}` }));
  process.once("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
