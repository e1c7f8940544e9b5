// `svc-gateway start` as a real process: SIGHUP reloads; SIGTERM drains (readiness 503 with draining true at
// once, a long streaming call in flight completes, exit 0 before the deadline).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { request } from "undici";
import { afterAll, expect, test, vi } from "vitest";
import { configYaml, connectClient } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const BIN = fileURLToPath(new URL("../../bin/svc-gateway.js", import.meta.url));

/** Collects the process's JSON log lines and lets a test wait for one. */
class LogWatcher {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly #waiters: Array<{
    match: (line: Record<string, unknown>) => boolean;
    resolve: (line: Record<string, unknown>) => void;
  }> = [];

  constructor(child: ChildProcess) {
    const reader = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    reader.on("line", (text) => {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return;
      }
      this.lines.push(line);
      for (const waiter of [...this.#waiters]) {
        if (waiter.match(line)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
  }

  next(match: (line: Record<string, unknown>) => boolean, after = 0): Promise<Record<string, unknown>> {
    const seen = this.lines.slice(after).find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
}

let child: ChildProcess | undefined;
let upstream: Upstream | undefined;
let dir: string | undefined;
afterAll(async () => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
  await upstream?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test("SIGHUP reloads; SIGTERM drains while a streaming call completes, then exits 0", async () => {
  upstream = await startUpstream({ stateful: true });
  dir = await mkdtemp(join(tmpdir(), "svc-gw-proc-"));
  const configPath = join(dir, "config.yaml");
  await writeFile(configPath, configYaml([{ name: "up", url: upstream.url }]));
  child = spawn(
    process.execPath,
    [BIN, "start", "--config", configPath, "--port", "0", "--host", "127.0.0.1"],
    {
      env: {
        ...process.env,
        LOG_LEVEL: "info",
        SVC_ALLOW_ANONYMOUS: "true",
        SVC_DRAIN_DELAY_SECONDS: "0.2",
        SVC_DRAIN_TIMEOUT_SECONDS: "20",
        SVC_CONFIG_POLL_SECONDS: "0",
      },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const logs = new LogWatcher(child);
  const listening = await logs.next((line) => line.msg === "listening");
  const url = listening.url as string;
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

  // SIGHUP: a forced reload of the (unchanged) file, generation 2.
  child.kill("SIGHUP");
  expect(await logs.next((line) => line.msg === "config reloaded")).toMatchObject({ generation: 2 });

  // A long streaming call is in flight: the tool has sent progress and waits for the test.
  const { client } = await connectClient(`${url}/up/mcp`);
  let progressed: () => void = () => {};
  const gotProgress = new Promise<void>((resolve) => {
    progressed = resolve;
  });
  const call = client.callTool({ name: "gated", arguments: { steps: 1 } }, CallToolResultSchema, {
    onprogress: () => progressed(),
  });
  await gotProgress;

  child.kill("SIGTERM");
  await logs.next((line) => line.msg === "draining");
  const readiness = await request(`${url}/readiness`);
  expect(readiness.statusCode).toBe(503);
  expect(await readiness.body.json()).toMatchObject({ status: "not ready", draining: true });
  // Still served during the drain delay, but every response sends the client's keep-alive connection elsewhere.
  expect(readiness.headers.connection).toBe("close");

  // After the drain delay the gateway stops accepting, but the call in flight goes on.
  await logs.next((line) => line.msg === "stopped accepting connections");
  upstream.gate.release();
  expect((await call).content).toEqual([{ type: "text", text: "released" }]);
  await client.close();

  const [code, signal] = await exited;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
  expect(await logs.next((line) => line.msg === "drained")).toMatchObject({ forced: false });
});

test("before its config is loaded the gateway answers: readiness 503, MCP requests 503", async () => {
  const starting = spawn(
    process.execPath,
    [BIN, "start", "--config", "-", "--port", "0", "--host", "127.0.0.1"],
    {
      env: { ...process.env, LOG_LEVEL: "info", SVC_DRAIN_DELAY_SECONDS: "0", SVC_ALLOW_ANONYMOUS: "true" },
      stdio: ["pipe", "pipe", "inherit"],
    },
  );
  const exited = once(starting, "exit");
  try {
    const logs = new LogWatcher(starting);
    // The config comes from standard input, which stays open: the gateway listens but cannot be ready yet.
    const url = (await logs.next((line) => line.msg === "loading config")).url as string;
    const readiness = await request(`${url}/readiness`);
    expect(readiness.statusCode).toBe(503);
    expect(await readiness.body.json()).toEqual({
      status: "not ready",
      draining: false,
      http_client: "initialized",
      upstreams: "0 loaded",
      kvstore_manager: "initialized",
    });
    const mcp = await request(`${url}/up/mcp`, { method: "POST", body: "{}" });
    expect(mcp.statusCode).toBe(503);
    expect(await mcp.body.json()).toMatchObject({ error: { code: "not_ready" } });

    starting.stdin?.end(configYaml([{ name: "up", url: "http://127.0.0.1:9/mcp" }]));
    await logs.next((line) => line.msg === "listening");
    expect((await request(`${url}/readiness`)).statusCode).toBe(200);
    starting.kill("SIGTERM");
    expect((await exited)[0]).toBe(0);
  } finally {
    if (starting.exitCode === null) starting.kill("SIGKILL");
  }
});

test("an invalid config stops the start with exit 1 and every problem on stderr", async () => {
  const bad = await mkdtemp(join(tmpdir(), "svc-gw-bad-"));
  try {
    const configPath = join(bad, "config.yaml");
    await writeFile(configPath, 'version: "2.0"\nservers:\n  - name: x\n    url: not a url\n');
    const failing = spawn(
      process.execPath,
      [BIN, "start", "--config", configPath, "--port", "0", "--host", "127.0.0.1"],
      {
        env: { ...process.env, LOG_LEVEL: "silent" },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    failing.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(failing, "exit");
    expect(code).toBe(1);
    expect(stderr).toContain("version");
    expect(stderr).toContain("servers[0].url");
  } finally {
    await rm(bad, { recursive: true, force: true });
  }
});
