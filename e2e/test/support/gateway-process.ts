import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { repoRoot } from "./paths.ts";

// `svc-gateway start` as its own process, as in the pod: ready when it logs "listening" with its URL.

export interface GatewayProcess {
  url: string;
  logs: string[];
  stop(): Promise<number | null>;
}

export async function startGatewayProcess(
  configFile: string,
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      join(repoRoot, "gateway", "bin", "svc-gateway.js"),
      "start",
      "--config",
      configFile,
      "--port",
      "0",
      "--host",
      "127.0.0.1",
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        SVC_CONFIG_POLL_SECONDS: "1",
        SVC_DRAIN_DELAY_SECONDS: "0",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: string[] = [];
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream as NodeJS.ReadableStream }).on("line", (line) => {
        logs.push(line);
        if (line.includes('"msg":"listening"')) {
          const match = /"url":"([^"]+)"/.exec(line);
          if (match?.[1]) resolve(match[1]);
        }
      });
    }
    void exit.then((code) =>
      reject(new Error(`svc-gateway exited (${code}) before listening:\n${logs.join("\n")}`)),
    );
  });
  return {
    url,
    logs,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exit;
    },
  };
}
