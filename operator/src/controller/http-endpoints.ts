import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Metrics } from "./metrics.ts";

// /healthz (the process answers), /readyz (ready to work: leading with synced caches, or standing by) and
// /metrics, on one port. No other routes.

export interface Endpoints {
  url: string;
  close(): Promise<void>;
}

export async function serveEndpoints(options: {
  host: string;
  port: number;
  metrics: Metrics;
  ready: () => { ready: boolean; detail: string };
}): Promise<Endpoints> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://operator").pathname;
    if (request.method !== "GET") {
      response.writeHead(405).end();
      return;
    }
    if (path === "/healthz") {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (path === "/readyz") {
      const { ready, detail } = options.ready();
      response.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(`${detail}\n`);
    } else if (path === "/metrics") {
      response.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(options.metrics.text());
    } else {
      response.writeHead(404).end();
    }
  });
  return listen(server, options.host, options.port);
}

/** Starts `server` on host:port; its URL, and a close that cuts open connections (long polls included). */
export async function listen(server: Server, host: string, port: number): Promise<Endpoints> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
