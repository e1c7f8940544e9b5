import { watch } from "node:fs";
import { join } from "node:path";
import { createProjectBuilder } from "../build/build-project.ts";
import { parsePort, parseServeArgs } from "./args.ts";
import { buildAndReport } from "./build.ts";
import { createDevProxy } from "./dev-proxy.ts";
import { type ServerProcess, startServerProcess } from "./dev-server-process.ts";
import { devEnvironment } from "./env-file.ts";
import { isSourceChange } from "./watch-filter.ts";

export const usage = "dev [--port N] [--host H]";
export const summary = "build (dev), serve, and rebuild + reload on every change";

const help = `Usage: svc dev [--port N] [--host H] [--project DIR]

Builds the project in dev mode (only the project's own files are bundled; packages load from node_modules),
serves it with .env loaded, and watches the project: on a change it rebuilds and starts the new server beside
the running one, switching over once the new one listens. A failed rebuild, or a new server that fails to
start (e.g. a broken auth.ts), is reported and the running server keeps serving. Editor temporary files
(swap, backup, lock files) never trigger a rebuild.

Options:
  --port N        port to listen on (default: $PORT, else 3000)
  --host H        address to bind (default: $HOST, else 127.0.0.1)
  --project DIR   the project directory (default: current directory)
  -h, --help      show this help
`;

/** How long saves are collected into one rebuild: editors write a file in several steps. */
const SETTLE_MS = 40;

/** Where `svc dev` reaches a server bound to `host` (a wildcard address is reached over loopback). */
function connectHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

export async function run(argv: string[]): Promise<number> {
  const options = parseServeArgs(argv);
  if (options === undefined) {
    process.stdout.write(help);
    return 0;
  }
  const { projectDir } = options;
  const host = options.host ?? (process.env.HOST || "127.0.0.1");
  const port = options.port ?? parsePort(process.env.PORT || "3000", "PORT");

  const proxy = createDevProxy();
  await new Promise<void>((resolve, reject) => {
    proxy.server.once("error", (error) =>
      reject(new Error(`cannot listen on ${host}:${port}: ${error.message}`)),
    );
    proxy.server.listen(port, host, () => resolve());
  });
  const address = proxy.server.address();
  const boundPort = typeof address === "object" && address ? address.port : port;
  const publicUrl = process.env.SVC_PUBLIC_URL || `http://${connectHost(host)}:${boundPort}`;
  const builder = await createProjectBuilder(projectDir, "dev");
  let current: ServerProcess | undefined;
  let stopping = false;

  const reload = async () => {
    const started = performance.now();
    // The server listens on a port of its own; requests reach it through this process once it is ready.
    const env: NodeJS.ProcessEnv = { ...devEnvironment(projectDir), HOST: host, PORT: "0" };
    env.SVC_PUBLIC_URL ??= publicUrl;
    let next: ServerProcess | undefined;
    const startNext = () => {
      next = startServerProcess(join(projectDir, "dist", "server.mjs"), projectDir, env);
    };
    if (!(await buildAndReport(projectDir, "dev", () => builder.build(startNext))) || !next) {
      await next?.stop();
      process.stderr.write(
        `svc dev: ${current ? "keeping the running server" : "no server is running"}; fix the problem and save again\n`,
      );
      return;
    }
    next.showOutput();
    const url = await next.ready;
    if (url === undefined) {
      process.stderr.write(
        current
          ? "svc dev: the new server failed to start (see above); the previous server keeps serving\n"
          : "svc dev: the server failed to start (see above); fix the problem and save again\n",
      );
      return;
    }
    proxy.setTarget(`http://${connectHost(host)}:${new URL(url).port}`);
    const previous = current;
    current = next;
    next.child.once("exit", () => {
      if (current !== next) return;
      current = undefined;
      proxy.setTarget(undefined);
      if (!stopping) process.stderr.write("svc dev: the server exited; save a file to start it again\n");
    });
    await previous?.stop();
    const took = Math.round(performance.now() - started);
    process.stderr.write(
      `svc dev: serving ${publicUrl}/mcp (${previous ? "reloaded" : "started"} in ${took} ms)\n`,
    );
  };

  await reload();
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const changed = new Set<string>();
  const watcher = watch(projectDir, { recursive: true }, (_event, file) => {
    if (!file || !isSourceChange(file)) return;
    changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => {
      const files = [...changed];
      changed.clear();
      const named =
        files.length > 3 ? `${files.slice(0, 3).join(", ")} and ${files.length - 3} more` : files.join(", ");
      process.stderr.write(`svc dev: ${named} changed; rebuilding\n`);
      // One unexpected failure must not end the loop: later saves still rebuild.
      running = running.then(reload).catch((error: unknown) => {
        process.stderr.write(`svc dev: ${(error as Error).message}\n`);
      });
    }, SETTLE_MS);
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      stopping = true;
      watcher.close();
      clearTimeout(timer);
      void running
        .then(() => Promise.all([current?.stop(), proxy.close(), builder.dispose()]))
        .then(() => resolve());
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
