// Runs upstream-server.ts (or fast-upstream-server.ts, or the bare Node proxy) as its own process, so it does not share
// an event loop with the load generator.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";

export interface RunningUpstream {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * "sdk": the SDK's stateless server, built per request (upstream-server.ts); "fast": a plain node:http server answering
 * the same messages (fast-upstream-server.ts), so a proxy's own cost shows.
 */
export type UpstreamKind = "sdk" | "fast";

export function spawnUpstream(kind: UpstreamKind = "sdk"): Promise<RunningUpstream> {
  return spawnListening(kind === "sdk" ? "./upstream-server.ts" : "./fast-upstream-server.ts");
}

/**
 * A bench script beside this one, run with `args` after its port argument (any free port) and `env` over this
 * process's; resolves once it prints its {"msg":"listening"} line.
 */
export async function spawnListening(
  file: string,
  args: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<RunningUpstream> {
  const script = new URL(file, import.meta.url).pathname;
  const child = spawn(process.execPath, [script, "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  };
  const lines = createInterface({ input: child.stdout });
  try {
    for await (const line of lines) {
      const parsed = JSON.parse(line) as { msg?: string; url?: string };
      if (parsed.msg === "listening" && parsed.url) {
        child.stdout.resume();
        return { url: parsed.url, pid: child.pid, stop };
      }
    }
    throw new Error("bench upstream exited before listening");
  } catch (error) {
    await stop();
    throw error;
  }
}
