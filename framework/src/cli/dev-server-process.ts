import { type ChildProcess, spawn } from "node:child_process";

const MAX_PENDING_LINE = 64 * 1024;
const MAX_HELD_OUTPUT = 1024 * 1024;

export interface ServerProcess {
  child: ChildProcess;
  /** The server's own URL once it logs "listening"; undefined when it exits first (a start-time error). */
  ready: Promise<string | undefined>;
  /** Passes the output held so far, and all that follows, to this process's stdout/stderr. */
  showOutput(): void;
  stop(): Promise<void>;
}

/**
 * Starts a built server (`node <entry>`) and watches its log for the "listening" line the runtime writes once
 * everything loaded. Its output is held until showOutput(): a server started while its build is still being
 * checked is stopped silently when the check fails (the build reports the problem once). Lines are scanned as
 * they arrive; only the unfinished last line is kept between chunks.
 */
export function startServerProcess(entry: string, cwd: string, env: NodeJS.ProcessEnv): ServerProcess {
  const child = spawn(process.execPath, [entry], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let held: [NodeJS.WriteStream, Buffer][] | undefined = [];
  let heldBytes = 0;
  const output = (stream: NodeJS.WriteStream) => (chunk: Buffer) => {
    if (!held) {
      stream.write(chunk);
      return;
    }
    // Held output is what a starting server logs: bounded, the newest dropped past the bound.
    if (heldBytes + chunk.length > MAX_HELD_OUTPUT) return;
    held.push([stream, chunk]);
    heldBytes += chunk.length;
  };
  child.stdout?.on("data", output(process.stdout));
  child.stderr?.on("data", output(process.stderr));
  const showOutput = () => {
    for (const [stream, chunk] of held ?? []) stream.write(chunk);
    held = undefined;
  };
  const ready = new Promise<string | undefined>((resolve) => {
    let pending = "";
    child.stdout?.on("data", (chunk: Buffer) => {
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
  return { child, ready, showOutput, stop };
}
