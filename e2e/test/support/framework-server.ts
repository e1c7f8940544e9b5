import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./paths.ts";
import { type ListeningProcess, spawnListening } from "./spawn-listening.ts";

// A server built with our framework, the way a user makes one: `svc init DIR`, `svc build prod`, then the
// bundle `dist/server.mjs` runs on its own (tool `hello` from the project template).
const run = promisify(execFile);
const svc = join(repoRoot, "framework", "bin", "svc.js");

export type FrameworkServer = ListeningProcess & { mcpUrl: string };

/**
 * `svc init` then `svc build prod` in `directory`; `prepare` changes the project in between (say, an auth.ts and a
 * tool of its own).
 */
export async function buildFrameworkProject(
  directory: string,
  prepare?: (directory: string) => Promise<void>,
): Promise<void> {
  await run(process.execPath, [svc, "init", directory]);
  await prepare?.(directory);
  await run(process.execPath, [svc, "build", "prod"], { cwd: directory });
}

/** Runs a built project's bundle; `env` is added to its environment (PORT defaults to 0: any free port). */
export async function runFrameworkServer(
  directory: string,
  env: Record<string, string> = {},
): Promise<FrameworkServer> {
  const server = await spawnListening([join(directory, "dist", "server.mjs")], {
    PORT: "0",
    HOST: "127.0.0.1",
    SVC_DATA_DIR: join(directory, ".svc"),
    ...env,
  });
  return { ...server, mcpUrl: `${server.url}/mcp` };
}

export async function startFrameworkServer(directory: string): Promise<FrameworkServer> {
  await buildFrameworkProject(directory);
  return runFrameworkServer(directory);
}
