import { Agent, request } from "node:http";

/** One POST over a keep-alive agent; resolves with the status, the session header and the whole body. */
function post(
  agent: Agent,
  url: URL,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; session: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
        ...headers,
      },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const session = res.headers["mcp-session-id"];
        resolve({
          status: res.statusCode ?? 0,
          session: typeof session === "string" ? session : undefined,
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function openSession(agent: Agent, url: URL): Promise<string> {
  const init = await post(
    agent,
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
    {},
  );
  if (init.status !== 200 || !init.session) throw new Error(`initialize failed: ${init.status} ${init.text}`);
  await post(agent, url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), {
    "mcp-session-id": init.session,
  });
  return init.session;
}

/**
 * Closed-loop load: `concurrency` workers, each with its own session, call the echo tool back to back for
 * `durationMs`. Returns completed calls per second; any non-200 or a missing result aborts the run.
 */
export async function measure(mcpUrl: string, concurrency: number, durationMs: number): Promise<number> {
  const url = new URL(mcpUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const sessions = await Promise.all(Array.from({ length: concurrency }, () => openSession(agent, url)));
  let completed = 0;
  const deadline = Date.now() + durationMs;
  const started = Date.now();
  await Promise.all(
    sessions.map(async (session, worker) => {
      let id = 1;
      while (Date.now() < deadline) {
        const body = JSON.stringify({
          jsonrpc: "2.0",
          id: id++,
          method: "tools/call",
          params: { name: "echo", arguments: { text: `hello ${worker}` } },
        });
        const response = await post(agent, url, body, { "mcp-session-id": session });
        if (response.status !== 200 || !response.text.includes(`hello ${worker}`)) {
          throw new Error(`tools/call failed: ${response.status} ${response.text.slice(0, 200)}`);
        }
        completed++;
      }
    }),
  );
  agent.destroy();
  return completed / ((Date.now() - started) / 1000);
}
