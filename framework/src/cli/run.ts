import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readManifest, staleReason } from "../build/manifest.ts";
import { parseServeArgs } from "./args.ts";
import { buildAndReport } from "./build.ts";
import { loadEnvFile } from "./env-file.ts";

export const usage = "run [--port N] [--host H]";
export const summary = "serve dist/, rebuilding first when it is stale";

const help = `Usage: svc run [--port N] [--host H] [--project DIR]

Serves the built project (MCP at /mcp, /health, /ready). When dist/ is missing, or its sources changed since
the last build, or another svc version built it, svc run says why and rebuilds first (in the mode of the last
build; prod when there was none). A dev build loads .env at run time (values already set in the environment
win); a prod build never reads it.

Options:
  --port N        port to listen on (default: $PORT, else 3000; 0 picks a free port)
  --host H        address to bind (default: $HOST, else 127.0.0.1; 0.0.0.0 in containers)
  --project DIR   the project directory (default: current directory)
  -h, --help      show this help
`;

export async function run(argv: string[]): Promise<number> {
  const options = parseServeArgs(argv);
  if (options === undefined) {
    process.stdout.write(help);
    return 0;
  }
  const { projectDir, port, host } = options;
  let manifest = await readManifest(projectDir);
  const stale = await staleReason(projectDir, manifest);
  if (stale) {
    const mode = manifest?.mode ?? "prod";
    process.stderr.write(`svc: dist/ is stale: ${stale}; rebuilding (${mode})\n`);
    if (!(await buildAndReport(projectDir, mode))) return 1;
    manifest = await readManifest(projectDir);
  }
  if (manifest?.mode === "dev") {
    const { values: fromFile, file } = loadEnvFile(projectDir);
    for (const [key, value] of Object.entries(fromFile)) process.env[key] ??= value;
    if (file)
      process.stderr.write(`svc: dev build: loaded ${Object.keys(fromFile).length} variables from .env\n`);
  }
  if (port !== undefined) process.env.PORT = String(port);
  if (host !== undefined) process.env.HOST = host;
  // The server runs in this process: one process to signal, nothing to forward.
  await import(pathToFileURL(join(projectDir, "dist", "server.mjs")).href);
  return -1; // keep running; the server exits the process itself
}
