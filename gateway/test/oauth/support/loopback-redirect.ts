// A desktop MCP client's redirect target: a loopback HTTP server (RFC 8252 7.3) that takes the one authorization
// response a real browser brings it.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface LoopbackRedirect {
  /** The redirect URI to register: http://127.0.0.1:<port>/callback. */
  uri: string;
  /** The URL the browser arrived at (with its code, or error). */
  arrived: Promise<URL>;
  close(): Promise<void>;
}

export async function startLoopbackRedirect(): Promise<LoopbackRedirect> {
  let arrive: (url: URL) => void = () => {};
  const arrived = new Promise<URL>((resolve) => {
    arrive = resolve;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    arrive(url);
    res.writeHead(200, { "content-type": "text/plain" }).end("You can close this window.\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return {
    uri,
    arrived,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
