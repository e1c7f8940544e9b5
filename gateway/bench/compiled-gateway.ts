// The bench measures the gateway as it runs in production: the compiled JavaScript of `npm run build -w gateway`
// (what the npm package and the container image run), not the TypeScript sources a checkout runs with type
// stripping, which costs start-up time and ~27 MB of resident memory for the process's lifetime.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const gatewayDir = fileURLToPath(new URL("../", import.meta.url));

/** Compiles the gateway into gateway/dist and returns the program to spawn: its CLI entry point. */
export async function buildCompiledGateway(): Promise<string> {
  await promisify(execFile)("npm", ["run", "build"], { cwd: gatewayDir });
  return fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
}

/**
 * The environment the container image starts the gateway with (its Dockerfile's `ENV NODE_OPTIONS` and
 * `ENV MALLOC_…` lines: V8 heap flags and the C allocator's tunables), so the bench runs it the same way.
 */
export function imageEnv(): Record<string, string> {
  const dockerfile = readFileSync(new URL("../Dockerfile", import.meta.url), "utf8");
  const env: Record<string, string> = {};
  for (const [, name, value] of dockerfile.matchAll(/^ENV (NODE_OPTIONS|MALLOC_\w+)=(.+)$/gm)) {
    if (name !== undefined && value !== undefined) env[name] = value.trim();
  }
  return env;
}
