import { execFile } from "node:child_process";
import { tmpdir } from "node:os";

// The real bin, as a platform engineer runs it: exit codes and output are the contract.
const BIN = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;

export interface Run {
  /** The exit code; null when the process was killed (it outlived timeoutMs). */
  code: number | null;
  stdout: string;
  stderr: string;
}

export function svcGateway(
  args: string[],
  options: { input?: string; cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd ?? tmpdir(),
        // A clean environment: no SVC_CONFIG_FILE or control-plane variables from the developer's shell.
        env: { PATH: process.env.PATH ?? "", ...options.env },
        // A command that should exit but serves instead (`start` on a config it should refuse) is killed, so a
        // regression fails the test rather than leaving a process behind.
        timeout: options.timeoutMs ?? 30_000,
        killSignal: "SIGKILL",
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : null) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? "");
  });
}
