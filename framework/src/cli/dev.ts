import { type ChildProcess, spawn } from "node:child_process";
import { watch } from "node:fs";
import { join } from "node:path";
import { parseServeArgs } from "./args.ts";
import { buildAndReport } from "./build.ts";
import { devEnvironment } from "./env-file.ts";

export const usage = "dev [--port N] [--host H]";
export const summary = "build (dev), serve, and rebuild + restart on every change";

const help = `Usage: svc dev [--port N] [--host H] [--project DIR]

Builds the project in dev mode, serves it with .env loaded, and watches the project: on a change it rebuilds
and restarts the server. A failed rebuild is reported and the running server is left as it was.

Options:
  --port N        port to listen on (default: $PORT, else 3000)
  --host H        address to bind (default: $HOST, else 127.0.0.1)
  --project DIR   the project directory (default: current directory)
  -h, --help      show this help
`;

const IGNORED = /^(dist|node_modules|\.svc|\.git)(\/|$)/;

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function run(argv: string[]): Promise<number> {
  const options = parseServeArgs(argv);
  if (options === undefined) {
    process.stdout.write(help);
    return 0;
  }
  const { projectDir, port, host } = options;
  let child: ChildProcess | undefined;

  const restart = async () => {
    if (!(await buildAndReport(projectDir, "dev"))) {
      process.stderr.write("svc dev: keeping the running server; fix the problem and save again\n");
      return;
    }
    await stopChild(child);
    const env = devEnvironment(projectDir);
    if (port !== undefined) env.PORT = String(port);
    if (host !== undefined) env.HOST = host;
    child = spawn(process.execPath, [join(projectDir, "dist", "server.mjs")], {
      cwd: projectDir,
      env,
      stdio: "inherit",
    });
  };

  await restart();
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const watcher = watch(projectDir, { recursive: true }, (_event, file) => {
    if (!file || IGNORED.test(file.replaceAll("\\", "/"))) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      process.stderr.write(`svc dev: ${file} changed; rebuilding\n`);
      running = running.then(restart);
    }, 150);
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      watcher.close();
      void stopChild(child).then(resolve);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}
