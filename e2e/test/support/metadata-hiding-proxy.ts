// A reverse proxy in front of a framework-built server that makes it look like a vendor's MCP server publishing no
// OAuth metadata: /.well-known/* answers 404 and challenges lose their resource_metadata. It can also refuse the
// next requests with 401 invalid_token, as a vendor does once it revoked an access token before its expiry.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface MetadataHidingProxy {
  url: string;
  /** Where it forwards to; set once the server behind it is up (its audience names this proxy's URL). */
  target: string | undefined;
  /** The next `count` MCP requests are answered 401 invalid_token without reaching the server. */
  rejectNext(count: number): void;
  /** Authorization headers of the requests that reached the server (or were refused), in order. */
  seen: string[];
  close(): Promise<void>;
}

export async function startMetadataHidingProxy(): Promise<MetadataHidingProxy> {
  let rejections = 0;
  const proxy: MetadataHidingProxy = {
    url: "",
    target: undefined,
    rejectNext(count) {
      rejections = count;
    },
    seen: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((incoming, outgoing) => {
    if (incoming.url?.startsWith("/.well-known/") || proxy.target === undefined) {
      outgoing.writeHead(404).end();
      return;
    }
    proxy.seen.push(incoming.headers.authorization ?? "");
    if (rejections > 0 && incoming.headers.authorization !== undefined) {
      rejections--;
      outgoing
        .writeHead(401, { "www-authenticate": 'Bearer error="invalid_token", error_description="revoked"' })
        .end();
      return;
    }
    const target = new URL(incoming.url ?? "/", proxy.target);
    const forwarded = request(
      target,
      { method: incoming.method, headers: { ...incoming.headers, host: target.host } },
      (answer) => {
        const headers = { ...answer.headers };
        const challenge = headers["www-authenticate"];
        if (typeof challenge === "string") {
          headers["www-authenticate"] = challenge.replace(/,?\s*resource_metadata="[^"]*"/, "");
        }
        outgoing.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on("error", () => outgoing.writeHead(502).end());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
