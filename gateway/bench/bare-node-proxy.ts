// The floor for a proxy written in Node with the libraries the gateway must use: node:http in front, an undici Pool
// behind, and nothing else — no routing, parsing, policy, metrics, logging or audit. The bench runs it beside nginx
// and the gateway (path `fast-floor`) so that "what the gateway's own work costs" and "what Node's HTTP server plus
// undici cost on this machine" are told apart in the same run. Not a product: every request goes to one upstream URL.
// Run as its own process: `node bare-node-proxy.ts <upstream origin>`; prints {"msg":"listening","url":...}.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Pool } from "undici";
import { serveUpstream } from "./serve-upstream.ts";

const origin = process.argv[3];
if (origin === undefined) throw new Error("usage: bare-node-proxy.ts <port> <upstream origin>");
// As many connections as the bench's busiest path has clients: no request waits for a connection.
const pool = new Pool(origin, { connections: 64 });

async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const upstream = await pool.request({
    path: req.url ?? "/",
    method: "POST",
    headers: {
      "content-type": req.headers["content-type"] ?? "application/json",
      accept: req.headers.accept ?? "application/json, text/event-stream",
    },
    body: req,
  });
  res.writeHead(upstream.statusCode, { "content-type": String(upstream.headers["content-type"] ?? "") });
  for await (const chunk of upstream.body) res.write(chunk);
  res.end();
}

await serveUpstream(forward);
