// The bench measures the gateway as it runs in production: the compiled JavaScript of `npm run build -w gateway`
// (what the npm package and the container image run), not the TypeScript sources a checkout runs with type
// stripping, which costs start-up time and ~27 MB of resident memory for the process's lifetime.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const gatewayDir = fileURLToPath(new URL("../", import.meta.url));

/** Compiles the gateway into gateway/dist and returns the program to spawn: its CLI entry point. */
export async function buildCompiledGateway(): Promise<string> {
  await promisify(execFile)("npm", ["run", "build"], { cwd: gatewayDir });
  return fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
}

/**
 * The environment the container image starts the gateway with (its Dockerfile's `ENV NODE_OPTIONS`, `ENV MALLOC_…`
 * and `ENV LD_PRELOAD` lines: V8 heap flags, the C allocator and its tunables), so the bench runs it the same way.
 * The image preloads jemalloc from a path of its own; here the same library is taken from where Debian's
 * libjemalloc2 installs it, and left out (with a message) when it is not installed.
 */
export function imageEnv(): Record<string, string> {
  const dockerfile = readFileSync(new URL("../Dockerfile", import.meta.url), "utf8");
  const env: Record<string, string> = {};
  for (const [, name, value] of dockerfile.matchAll(/^ENV (NODE_OPTIONS|MALLOC_\w+|LD_PRELOAD)=(.+)$/gm)) {
    if (name !== undefined && value !== undefined) env[name] = value.trim();
  }
  if (env.LD_PRELOAD !== undefined) {
    const library = [
      env.LD_PRELOAD,
      join("/usr/lib", `${multiarch()}-linux-gnu`, basename(env.LD_PRELOAD)),
    ].find((path) => existsSync(path));
    if (library === undefined) {
      console.log(
        `${basename(env.LD_PRELOAD)} is not installed (apt-get install -y libjemalloc2): the gateways run on glibc's malloc, not as the image does`,
      );
      delete env.LD_PRELOAD;
    } else env.LD_PRELOAD = library;
  }
  return env;
}

/** Debian's name for this machine's architecture in library paths (`uname -m`). */
function multiarch(): string {
  return process.arch === "arm64" ? "aarch64" : process.arch === "x64" ? "x86_64" : process.arch;
}
