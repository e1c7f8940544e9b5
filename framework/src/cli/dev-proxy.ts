import { createServer, request, type Server } from "node:http";

/**
 * The address `svc dev` listens on: it forwards every request to the current server process, so a reload
 * starts the new server beside the old one and switches only once the new one listens. A new server that fails
 * to start never replaces the one that is serving.
 */
export interface DevProxy {
  server: Server;
  /** Where requests go from now on (`http://host:port`), or undefined: 503 until a server runs. */
  setTarget(url: string | undefined): void;
  close(): Promise<void>;
}

export function createDevProxy(): DevProxy {
  let target: URL | undefined;
  const server = createServer((incoming, outgoing) => {
    if (!target) {
      outgoing.writeHead(503, { "content-type": "text/plain", "retry-after": "1" });
      outgoing.end("svc dev: no server is running; fix the problem reported by svc dev and save again\n");
      return;
    }
    // The Host header is passed on as the client sent it: the server's DNS-rebinding guard checks it.
    const upstream = request(
      {
        host: target.hostname.replace(/^\[|\]$/g, ""),
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on("error", (error) => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "text/plain" });
      outgoing.end(`svc dev: the server did not answer: ${error.message}\n`);
    });
    outgoing.on("close", () => upstream.destroy());
    incoming.pipe(upstream);
  });
  return {
    server,
    setTarget(url) {
      target = url === undefined ? undefined : new URL(url);
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
