// The MCP endpoint: exactly /mcp, DNS-rebinding protection on loopback, sessions, resumable streams, and the
// stateless option.
import { request } from "node:http";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  LoggingMessageNotificationSchema,
  ProgressNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { postJsonRpc } from "svc-testkit/json-rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build/build-project.ts";
import { MAX_BODY_BYTES } from "../src/runtime/request-body.ts";
import { runToEnd, type Spawned } from "./helpers/processes.ts";
import { connectClient, serveBuilt, tempDir, writeProject } from "./helpers/projects.ts";

const TOOLS = {
  "tools/slow.ts": `import { defineTool } from "@svc-mcp/framework";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Closes its response stream mid-call: the client must resume (Last-Event-ID) to get the result.
export default defineTool({ description: "Closes the stream, then answers", handler: async (_a, ctx) => {
  await ctx.progress(1, 2);
  ctx.closeStream();
  await sleep(300);
  await ctx.log("warning", "after the stream closed");
  return "finished after reconnect";
} });\n`,
  "tools/chatty.ts": `import { defineTool } from "@svc-mcp/framework";
export default defineTool({ description: "Logs at two levels", handler: async (_a, ctx) => {
  await ctx.log("debug", "debug line"); await ctx.log("error", "error line"); return "ok";
} });\n`,
};

let root: Awaited<ReturnType<typeof tempDir>>;
const servers: Spawned[] = [];
const clients: Client[] = [];
let url: string;
let statelessUrl: string;

const post = (target: string, body: object, headers: Record<string, string> = {}) =>
  postJsonRpc(`${target}/mcp`, body, headers);

/** fetch cannot set Host; node:http can. Resolves with the status code. */
function postWithHost(target: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${target}/mcp`, {
      method: "POST",
      headers: { host, "content-type": "application/json", accept: "application/json, text/event-stream" },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }));
  });
}

beforeAll(async () => {
  root = await tempDir("runtime");
  for (const stateless of [false, true]) {
    const dir = join(root.dir, stateless ? "stateless" : "stateful");
    await writeProject(dir, { "svc.json": { name: "rt", stateless_http: stateless }, ...TOOLS });
    await buildProject(dir, "prod");
    const served = await serveBuilt(dir);
    servers.push(served.server);
    if (stateless) statelessUrl = served.url;
    else url = served.url;
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(servers.map((s) => s.stop()));
  await root?.cleanup();
});

describe("the MCP endpoint", () => {
  it("is exactly /mcp", async () => {
    expect((await fetch(`${url}/mcp/`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${url}/mcp/x`, { method: "POST" })).status).toBe(404);
  });

  it("refuses a foreign Host or Origin on a loopback server (DNS rebinding)", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "ping" };
    expect(await postWithHost(url, "evil.example")).toBe(403);
    expect(await postWithHost(url, `localhost:${new URL(url).port}`)).not.toBe(403);
    expect((await post(url, init, { origin: "https://evil.example" })).status).toBe(403);
    expect((await post(url, init, { origin: "http://localhost:1234" })).status).not.toBe(403);
  });

  it("answers 400 for a body that is not JSON and 413 above the body limit", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const bad = await fetch(`${url}/mcp`, { method: "POST", headers, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const big = await fetch(`${url}/mcp`, {
      method: "POST",
      headers,
      body: `"${"x".repeat(MAX_BODY_BYTES)}"`,
    });
    expect(big.status).toBe(413);
  });

  it("answers 404 for an unknown session and 400 for a GET without one", async () => {
    const response = await post(
      url,
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      {
        "mcp-session-id": "00000000-0000-0000-0000-000000000000",
        "mcp-protocol-version": "2025-06-18",
      },
    );
    expect(response.status).toBe(404);
    expect((await fetch(`${url}/mcp`, { headers: { accept: "text/event-stream" } })).status).toBe(400);
  });

  it("resumes a closed stream from the event store and delivers the result", async () => {
    const client = await connectClient(url);
    clients.push(client);
    const progress: number[] = [];
    const result = await client.callTool({ name: "slow", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
      timeout: 20_000,
    });
    expect(result.content).toEqual([{ type: "text", text: "finished after reconnect" }]);
    expect(progress).toEqual([1]);
  }, 30_000);

  it("filters log notifications by the session's logging/setLevel", async () => {
    const client = await connectClient(url);
    clients.push(client);
    const lines: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      lines.push(`${n.params.level}:${String(n.params.data)}`);
    });
    client.setNotificationHandler(ProgressNotificationSchema, () => {});
    await client.setLoggingLevel("warning");
    await client.callTool({ name: "chatty", arguments: {} });
    expect(lines).toEqual(["error:error line"]);
  });
});

describe("startup", () => {
  it("reports a port in use as one clear line and exit code 1", async () => {
    const dir = join(root.dir, "stateful");
    const port = new URL(url).port;
    const run = await runToEnd(process.execPath, [join(dir, "dist", "server.mjs")], {
      cwd: dir,
      env: { PORT: port, HOST: "127.0.0.1" },
    });
    expect(run.code).toBe(1);
    expect(run.output).toContain(`cannot listen on 127.0.0.1:${port}:`);
    expect(run.output).toContain("EADDRINUSE");
  }, 30_000);
});

describe("stateless_http", () => {
  it("serves without a session id", async () => {
    const response = await post(statelessUrl, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    const client = await connectClient(statelessUrl);
    clients.push(client);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["chatty", "slow"]);
    expect((await client.callTool({ name: "chatty", arguments: {} })).content).toEqual([
      { type: "text", text: "ok" },
    ]);
  });
});
