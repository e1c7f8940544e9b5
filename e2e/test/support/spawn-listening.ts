import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

// Spawns a node program that logs one JSON line with "msg":"listening" and its "url" when it serves (the
// convention of `svc-gateway start` and of framework-built servers), and resolves with that URL.

export interface ListeningProcess {
  url: string;
  logs: string[];
  stop(): Promise<number | null>;
}

export async function spawnListening(args: string[], env: Record<string, string>): Promise<ListeningProcess> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        logs.push(line);
        if (line.includes('"msg":"listening"')) {
          const match = /"url":"([^"]+)"/.exec(line);
          if (match?.[1]) resolve(match[1]);
        }
      });
    }
    void exit.then((code) =>
      reject(new Error(`${args[0]} exited (${code}) before listening:\n${logs.join("\n")}`)),
    );
  });
  return {
    url,
    logs,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exit;
    },
  };
}
