import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { operatorDir } from "./paths.ts";

// `svc-operator run` as a Deployment runs it, against an API server that refuses connections: watches back
// off instead of spinning, and SIGTERM/SIGINT end the process with exit 0 well inside the chart's
// terminationGracePeriodSeconds (30 s).
const operatorBin = join(operatorDir, "bin", "svc-operator.js");
const GRACE_PERIOD_MS = 30_000;

interface LogLine {
  time: string;
  msg: string;
  informer?: string;
  retryInMs?: number;
  failures?: number;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, "close");
  return port;
}

function startOperator(port: number, ...flags: string[]) {
  const child = spawn(
    process.execPath,
    [
      operatorBin,
      "run",
      "--server",
      `http://127.0.0.1:${port}`,
      "--health-host",
      "127.0.0.1",
      "--health-port",
      "0",
      ...flags,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const lines: LogLine[] = [];
  const waiters: (() => void)[] = [];
  let partial = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    partial += chunk;
    const complete = partial.split("\n");
    partial = complete.pop() ?? "";
    for (const text of complete) if (text.trim()) lines.push(JSON.parse(text) as LogLine);
    for (const wake of waiters.splice(0)) wake();
  });
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  /** Resolves once `condition` holds for the log so far. */
  const until = async (condition: (lines: LogLine[]) => boolean) => {
    while (!condition(lines)) {
      if (child.exitCode !== null) throw new Error(`operator exited early:\n${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, lines, until, exited };
}

async function stopWithin(
  child: ChildProcess,
  exited: Promise<[number | null, unknown]>,
  signal: NodeJS.Signals,
) {
  const sentAt = Date.now();
  child.kill(signal);
  const [code] = await exited;
  return { code, tookMs: Date.now() - sentAt };
}

describe("svc-operator run with the API server unreachable", () => {
  it("backs off watch restarts exponentially, keeps its log rate low, and exits 0 on SIGTERM", async () => {
    const port = await closedPort();
    const operator = startOperator(port, "--no-leader-election");
    try {
      const mcpServerFailures = (lines: LogLine[]) =>
        lines.filter((line) => line.msg === "watch failed; restarting" && line.informer === "McpServer");
      await operator.until((lines) => mcpServerFailures(lines).length >= 4);
      const failures = mcpServerFailures(operator.lines);
      const times = failures.map((line) => Date.parse(line.time));
      const gaps = times.slice(1).map((time, i) => time - (times[i] as number));
      // The gap between retries grows (1 s, 2 s, 4 s with up to 20 % jitter off each).
      expect(gaps[1] as number).toBeGreaterThan(gaps[0] as number);
      expect(gaps[2] as number).toBeGreaterThan(gaps[1] as number);
      expect(failures.map((line) => line.retryInMs)).toEqual(
        [...(failures.map((line) => line.retryInMs) as number[])].sort((a, b) => a - b),
      );
      // Every watch logs once per attempt: a tight loop logged 14 lines a second, for ever.
      const first = Date.parse((operator.lines[0] as LogLine).time);
      const last = Date.parse((operator.lines.at(-1) as LogLine).time);
      const perSecond = operator.lines.length / ((last - first) / 1000);
      expect(perSecond).toBeLessThan(7);

      const { code, tookMs } = await stopWithin(operator.child, operator.exited, "SIGTERM");
      expect(code).toBe(0);
      expect(tookMs).toBeLessThan(GRACE_PERIOD_MS);
      expect(operator.lines.at(-1)?.msg).toBe("operator stopped");
    } finally {
      operator.child.kill("SIGKILL");
    }
  }, 60_000);

  it("exits 0 on SIGINT while campaigning for the lease", async () => {
    const port = await closedPort();
    const operator = startOperator(port);
    try {
      await operator.until((lines) => lines.some((line) => line.msg === "lease update failed"));
      const { code, tookMs } = await stopWithin(operator.child, operator.exited, "SIGINT");
      expect(code).toBe(0);
      expect(tookMs).toBeLessThan(GRACE_PERIOD_MS);
    } finally {
      operator.child.kill("SIGKILL");
    }
  }, 60_000);
});
