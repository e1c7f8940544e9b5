import { type ChildProcess, spawn } from "node:child_process";

const MAX_PENDING_LINE = 64 * 1024;

export interface ServerProcess {
  child: ChildProcess;
  /** The server's own URL once it logs "listening"; undefined when it exits first (a start-time error). */
  ready: Promise<string | undefined>;
  stop(): Promise<void>;
}

/**
 * Starts a built server (`node <entry>`) with its output passed through, and watches its log for the
 * "listening" line the runtime writes once everything loaded. Lines are scanned as they arrive; only the
 * unfinished last line is kept between chunks.
 */
export function startServerProcess(entry: string, cwd: string, env: NodeJS.ProcessEnv): ServerProcess {
  const child = spawn(process.execPath, [entry], { cwd, env, stdio: ["ignore", "pipe", "inherit"] });
  const ready = new Promise<string | undefined>((resolve) => {
    let pending = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (pending + chunk.toString("utf8")).split("\n");
      // A line without an end (a child writing megabytes at once) is not a log line worth scanning: drop it.
      pending = (lines.pop() ?? "").slice(-MAX_PENDING_LINE);
      for (const line of lines) {
        if (!line.includes('"msg":"listening"')) continue;
        try {
          resolve((JSON.parse(line) as { url: string }).url);
        } catch {
          // not one of the runtime's JSON lines: keep reading
        }
      }
    });
    child.once("exit", () => resolve(undefined));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return { child, ready, stop };
}
