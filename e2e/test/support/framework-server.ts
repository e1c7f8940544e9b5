import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./paths.ts";
import { type ListeningProcess, spawnListening } from "./spawn-listening.ts";

// A server built with our framework, the way a user makes one: `svc init DIR`, `svc build prod`, then the
// bundle `dist/server.mjs` runs on its own (tool `hello` from the project template).
const run = promisify(execFile);
const svc = join(repoRoot, "framework", "bin", "svc.js");

export async function startFrameworkServer(
  directory: string,
): Promise<ListeningProcess & { mcpUrl: string }> {
  await run(process.execPath, [svc, "init", directory]);
  await run(process.execPath, [svc, "build", "prod"], { cwd: directory });
  const server = await spawnListening([join(directory, "dist", "server.mjs")], {
    PORT: "0",
    HOST: "127.0.0.1",
    SVC_DATA_DIR: join(directory, ".svc"),
  });
  return { ...server, mcpUrl: `${server.url}/mcp` };
}
