// The bench's fast upstream: a plain node:http server that answers the MCP messages the bench and the proxies send
// (initialize, notifications, tools/list, tools/call of `echo` and `report`) without building an SDK server per
// request, so what a proxy in front of it costs is not hidden behind the upstream's own cost. Same routes and answers
// as upstream-server.ts:
//   /json/mcp  a JSON response
//   /sse/mcp   an SSE stream carrying the one response
// Stateless (no session id). Run as its own process: prints {"msg":"listening","url":"http://127.0.0.1:<port>"}.
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody, serveUpstream } from "./serve-upstream.ts";

interface JsonRpcRequest {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: { name?: string; arguments?: { text?: unknown }; protocolVersion?: string };
}

const TOOLS = [
  { name: "echo", description: "Returns its text argument", inputSchema: textSchema() },
  { name: "report", description: "Returns its text argument four times over", inputSchema: textSchema() },
];

function textSchema() {
  return { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
}

function rpcError(id: JsonRpcRequest["id"], code: number, message: string) {
  return { jsonrpc: "2.0", id: id ?? null, error: { code, message } };
}

/** The result for one request; undefined for a notification (no id), which gets 202 and no body. */
function answer(request: JsonRpcRequest): unknown {
  if (request.id === undefined) return undefined;
  const id = request.id;
  switch (request.method) {
    case "initialize":
      return {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: request.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: { listChanged: false } },
          serverInfo: { name: "svc-bench-fast-upstream", version: "1.0.0" },
        },
      };
    case "ping":
      return { jsonrpc: "2.0", id, result: {} };
    case "tools/list":
      return { jsonrpc: "2.0", id, result: { tools: TOOLS } };
    case "tools/call": {
      const text = request.params?.arguments?.text;
      if (typeof text !== "string") return rpcError(id, -32602, "arguments.text must be a string");
      const name = request.params?.name;
      if (name === "echo") return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } };
      if (name === "report") {
        return {
          jsonrpc: "2.0",
          id,
          result: { content: [{ type: "text", text: `${text}\n${text}\n${text}\n${text}` }] },
        };
      }
      return rpcError(id, -32602, `unknown tool ${String(name)}`);
    }
    default:
      return rpcError(id, -32601, `method not found: ${String(request.method)}`);
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = req.url ?? "";
  const json = path === "/json/mcp";
  if (!json && path !== "/sse/mcp") {
    res.writeHead(404).end();
    return;
  }
  if (req.method === "DELETE") {
    res.writeHead(200).end();
    return;
  }
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST, DELETE" }).end();
    return;
  }
  let parsed: JsonRpcRequest;
  try {
    parsed = JSON.parse(await readBody(req)) as JsonRpcRequest;
  } catch {
    res
      .writeHead(400, { "content-type": "application/json" })
      .end(JSON.stringify(rpcError(null, -32700, "parse error")));
    return;
  }
  const response = answer(parsed);
  if (response === undefined) {
    res.writeHead(202).end();
    return;
  }
  const text = JSON.stringify(response);
  if (json) {
    res.writeHead(200, { "content-type": "application/json" }).end(text);
    return;
  }
  res
    .writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    .end(`event: message\ndata: ${text}\n\n`);
}

await serveUpstream(handle);
