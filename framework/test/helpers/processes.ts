import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** The workspace's bin directory: `svc` and the pinned Node 24 (`node`) live here. */
export const BIN_DIR = `${REPO_ROOT}node_modules/.bin`;
export const SVC_BIN = `${BIN_DIR}/svc`;

/** A free loopback port (bound and released; fine for tests that start one server right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * Spawns a command with the workspace's Node first on PATH (or exactly `path`, for processes that must not see
 * this repository); collects stdout+stderr.
 */
export function spawnWithOutput(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; path?: string },
): Spawned {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, PATH: options.path ?? `${BIN_DIR}:${process.env.PATH ?? ""}` },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5000).unref();
      }),
  };
}

/** Runs a command to completion. */
export async function runToEnd(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; path?: string },
): Promise<{ code: number | null; output: string }> {
  const spawned = spawnWithOutput(command, args, options);
  const code = await new Promise<number | null>((resolve) => spawned.child.once("exit", resolve));
  return { code, output: spawned.output() };
}

/** Resolves with the parsed `"msg":"listening"` log line, or rejects with the output when the process exits. */
export function waitForListening(spawned: Spawned, timeoutMs = 60_000): Promise<{ url: string }> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const line = spawned
        .output()
        .split("\n")
        .find((l) => l.includes('"msg":"listening"'));
      if (line) {
        clearInterval(timer);
        clearTimeout(deadline);
        resolve(JSON.parse(line) as { url: string });
      } else if (spawned.child.exitCode !== null) {
        clearInterval(timer);
        clearTimeout(deadline);
        reject(new Error(`server exited with ${spawned.child.exitCode}:\n${spawned.output()}`));
      }
    }, 50);
    const deadline = setTimeout(() => {
      clearInterval(timer);
      reject(new Error(`server did not start within ${timeoutMs} ms:\n${spawned.output()}`));
    }, timeoutMs);
  });
}
