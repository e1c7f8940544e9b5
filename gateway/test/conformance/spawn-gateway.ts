// Spawns `svc-gateway start` as its own process (as in production) and resolves with its URL once it logs
// the "listening" line (contract: one JSON line with "msg":"listening" and "url"). Used by the conformance
// test and by `npm run bench`.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface SpawnedGateway {
  /** e.g. http://127.0.0.1:43123 (no trailing slash); upstream X is at `${url}/X/mcp`. */
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface SpawnGatewayOptions {
  env?: Record<string, string>;
  /** Where stdout (the JSON logs) goes. A file, so nobody has to drain a pipe; default: a file beside the config. */
  logFile?: string;
  timeoutMs?: number;
  /** The program to run (default bin/svc-gateway.js: the sources in a checkout); the bench passes the compiled one. */
  program?: string;
  /** The port to listen on, when its URL must be known before the start (SVC_PUBLIC_URL); default any free one. */
  port?: number;
}

const bin = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;

/** Writes `gateway.yaml` into dir with one `upstream_auth_type: none` server per entry, named by its key. */
export async function writeGatewayConfig(dir: string, servers: Record<string, string>): Promise<string> {
  const file = join(dir, "gateway.yaml");
  const entries = Object.entries(servers).map(
    ([name, url]) => `  - name: ${name}\n    url: ${url}\n    upstream_auth_type: none\n`,
  );
  await writeFile(file, `version: "1.0"\nservers:\n${entries.join("")}`);
  return file;
}

export async function spawnGateway(
  configFile: string,
  options: SpawnGatewayOptions = {},
): Promise<SpawnedGateway> {
  const logFile = options.logFile ?? `${configFile}.log`;
  const timeoutMs = options.timeoutMs ?? 20_000;
  const stdout = openSync(logFile, "w");
  const child = spawn(
    process.execPath,
    [
      options.program ?? bin,
      "start",
      "--config",
      configFile,
      "--port",
      String(options.port ?? 0),
      "--host",
      "127.0.0.1",
    ],
    {
      // No drain delay: nothing routes to this gateway but the test or bench that started it. Its configs have no
      // identity providers and its clients no tokens, so anonymous access is on unless the caller says otherwise.
      env: {
        ...process.env,
        SVC_DRAIN_DELAY_SECONDS: "0",
        SVC_DRAIN_TIMEOUT_SECONDS: "2",
        SVC_ALLOW_ANONYMOUS: "true",
        ...options.env,
      },
      stdio: ["ignore", stdout, "pipe"],
    },
  );
  closeSync(stdout);
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc-gateway exited with ${child.exitCode}: ${stderr}`);
      const url = listeningUrl(await readFile(logFile, "utf8"));
      if (url) return { url, process: child, stop };
      if (Date.now() > deadline)
        throw new Error(`svc-gateway did not log "listening" in ${timeoutMs} ms: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Waits until the gateway's /readiness answers 200: "listening" comes before the KV store has connected (a real Redis
 * may take a moment), and a test that needs shared state must not race it.
 */
export async function waitForReadiness(gateway: SpawnedGateway, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await fetch(`${gateway.url}/readiness`)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`gateway ${gateway.url} not ready in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function listeningUrl(log: string): string | undefined {
  for (const line of log.split("\n")) {
    if (!line.includes('"listening"')) continue;
    try {
      const parsed = JSON.parse(line) as { msg?: string; url?: string };
      if (parsed.msg === "listening" && parsed.url) return parsed.url.replace(/\/$/, "");
    } catch {
      // a partly written line: read again
    }
  }
  return undefined;
}
