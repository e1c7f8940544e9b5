// The JavaScript MCP proxies the gateway is compared with, each wired HTTP→HTTP in front of the fast upstream and run
// as its own process, when its package (a bench-only devDependency) is installed:
//   mcp-proxy  the `mcp-proxy` library: stateless streamable HTTP in, one streamable HTTP client out (mcp-proxy-peer.ts)
//   inspector  the MCP Inspector's proxy server (`@modelcontextprotocol/inspector`), streamable HTTP in and out. It is
//              stateful: the bench opens one session (initialize + notifications/initialized) and sends every request
//              in it, each with its own JSON-RPC id (the SDK transport routes answers by id).
// A peer that is not installed is skipped with a message saying how to install it.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { freePort } from "./free-port.ts";

export type PeerName = "mcp-proxy" | "inspector";
export const PEERS: readonly PeerName[] = ["mcp-proxy", "inspector"];

export interface RunningPeer {
  name: PeerName;
  /** The MCP endpoint the bench posts to. */
  url: string;
  pid: number | undefined;
  /** Headers every request must carry (the Inspector's session id). */
  headers: Record<string, string>;
  /** True when requests share a session and so need distinct JSON-RPC ids. */
  needsDistinctIds: boolean;
  stop(): Promise<void>;
}

const PACKAGES: Record<PeerName, string> = {
  "mcp-proxy": "mcp-proxy",
  inspector: "@modelcontextprotocol/inspector/package.json",
};

function installed(name: PeerName): string | undefined {
  try {
    return import.meta.resolve(PACKAGES[name]);
  } catch {
    return undefined;
  }
}

function stopper(child: ChildProcess): () => Promise<void> {
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
}

/** Resolves once a line of the child's stdout passes `ready`; the child's other output is drained. */
async function waitForLine(
  child: ChildProcess,
  ready: (line: string) => boolean,
  what: string,
): Promise<void> {
  if (!child.stdout) throw new Error(`${what}: no stdout`);
  const lines = createInterface({ input: child.stdout });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    for await (const line of lines) {
      if (ready(line)) {
        child.stdout.resume();
        return;
      }
    }
    throw new Error(`${what} exited before listening`);
  } finally {
    clearTimeout(timer);
  }
}

const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

async function startMcpProxy(upstreamMcpUrl: string): Promise<RunningPeer> {
  const port = await freePort();
  const script = new URL("./mcp-proxy-peer.ts", import.meta.url).pathname;
  const child = spawn(process.execPath, [script, upstreamMcpUrl, String(port)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = stopper(child);
  try {
    await waitForLine(child, (line) => line.includes('"listening"'), "mcp-proxy");
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name: "mcp-proxy",
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    headers: {},
    needsDistinctIds: false,
    stop,
  };
}

async function startInspector(upstreamMcpUrl: string): Promise<RunningPeer> {
  const port = await freePort();
  const packageJson = installed("inspector");
  if (!packageJson) throw new Error("@modelcontextprotocol/inspector is not installed");
  const entry = new URL("./server/build/index.js", packageJson).pathname;
  const child = spawn(process.execPath, [entry], {
    // Its auth token guards a local developer tool; the bench's loopback load carries none.
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DANGEROUSLY_OMIT_AUTH: "true" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = stopper(child);
  try {
    await waitForLine(child, (line) => line.includes("listening on"), "MCP Inspector proxy");
    const url = `http://127.0.0.1:${port}/mcp?url=${encodeURIComponent(upstreamMcpUrl)}&transportType=streamable-http`;
    const initialized = await fetch(url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "svc-bench", version: "1" },
        },
      }),
    });
    await initialized.text();
    const session = initialized.headers.get("mcp-session-id");
    if (initialized.status !== 200 || !session) {
      throw new Error(`MCP Inspector proxy: initialize answered ${initialized.status} without a session id`);
    }
    const headers = { "mcp-session-id": session };
    const notified = await fetch(url, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    await notified.text();
    return { name: "inspector", url, pid: child.pid, headers, needsDistinctIds: true, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Starts every installed peer in front of upstreamMcpUrl; prints why one is skipped. */
export async function startPeers(upstreamMcpUrl: string): Promise<RunningPeer[]> {
  const running: RunningPeer[] = [];
  for (const name of PEERS) {
    if (!installed(name)) {
      console.log(
        `${name}: not installed, skipped (npm install -D ${PACKAGES[name].replace("/package.json", "")} -w gateway)`,
      );
      continue;
    }
    try {
      running.push(
        await (name === "mcp-proxy" ? startMcpProxy(upstreamMcpUrl) : startInspector(upstreamMcpUrl)),
      );
    } catch (error) {
      console.log(`${name}: could not be started, skipped: ${(error as Error).message}`);
    }
  }
  return running;
}
