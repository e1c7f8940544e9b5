// `npm run bench:framework`, first part: the dev loop as a new user meets it, with the compiled framework (what
// an installed package runs: dist/, built by `npm run build -w framework` before this). A scaffolded project in
// the temp directory; the figures are `svc dev` reload after a tool edit (from the save until the new server
// serves), `svc build prod` wall time, and the size of the prod bundle, each against its target.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../test/helpers/processes.ts";

const TARGETS = { reloadMs: 1000, buildProdMs: 5000, bundleBytes: 3 * 1024 * 1024 };
const RELOADS = Number(process.env.BENCH_RELOADS ?? 5);
const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));

if (!existsSync(CLI)) {
  process.stderr.write(
    `${CLI} is missing: run 'npm run build -w framework' first (npm run bench:framework does)\n`,
  );
  process.exit(2);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function svc(args: string[], cwd: string): { code: number | null; output: string; ms: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8" });
  return { code: result.status, output: result.stdout + result.stderr, ms: performance.now() - started };
}

/** Resolves once `pattern` has matched `count` times in the output, polling every few milliseconds. */
function waitForOutput(
  output: () => string,
  pattern: RegExp,
  count: number,
  child: ChildProcess,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 60_000;
    const timer = setInterval(() => {
      if ((output().match(pattern) ?? []).length >= count) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null || Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`svc dev did not get there:\n${output()}`));
      }
    }, 5);
  });
}

const root = await mkdtemp(join(tmpdir(), "svc-bench-dev-"));
let dev: ChildProcess | undefined;
try {
  const project = join(root, "bench-tools");
  if (svc(["init", project], root).code !== 0) throw new Error("svc init failed");

  const build = svc(["build", "prod"], project);
  if (build.code !== 0) throw new Error(`svc build prod failed:\n${build.output}`);
  const bundle = (await stat(join(project, "dist", "server.mjs"))).size;
  const map = (await stat(join(project, "dist", "server.mjs.map"))).size;

  const port = await freePort();
  let output = "";
  const started = performance.now();
  dev = spawn(process.execPath, [CLI, "dev", "--port", String(port)], {
    cwd: project,
    stdio: ["ignore", "pipe", "pipe"],
  });
  dev.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  dev.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const serving = /svc dev: serving /g;
  await waitForOutput(() => output, serving, 1, dev);
  const firstStart = performance.now() - started;

  const tool = join(project, "tools", "hello.ts");
  const source = await readFile(tool, "utf8");
  const reloads: number[] = [];
  for (let i = 1; i <= RELOADS; i++) {
    const saved = performance.now();
    await writeFile(tool, source.replace("Greets someone by name.", `Greets someone by name (edit ${i}).`));
    await waitForOutput(() => output, serving, i + 1, dev);
    reloads.push(performance.now() - saved);
  }

  const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL");
  const reload = median(reloads);
  const rows = [
    `svc dev first start: ${firstStart.toFixed(0)} ms`,
    `svc dev reload after a tool edit: median ${reload.toFixed(0)} ms, max ${Math.max(...reloads).toFixed(0)} ms over ${RELOADS} saves (target <= ${TARGETS.reloadMs} ms): ${verdict(reload <= TARGETS.reloadMs)}`,
    `svc build prod: ${build.ms.toFixed(0)} ms (target <= ${TARGETS.buildProdMs} ms): ${verdict(build.ms <= TARGETS.buildProdMs)}`,
    `prod bundle dist/server.mjs: ${(bundle / 1024 / 1024).toFixed(2)} MB (target <= ${TARGETS.bundleBytes / 1024 / 1024} MB): ${verdict(bundle <= TARGETS.bundleBytes)}; source map, a separate file: ${(map / 1024 / 1024).toFixed(2)} MB`,
  ];
  process.stdout.write(`${rows.join("\n")}\n\n`);
  process.exitCode =
    reload <= TARGETS.reloadMs && build.ms <= TARGETS.buildProdMs && bundle <= TARGETS.bundleBytes ? 0 : 1;
} finally {
  dev?.kill("SIGTERM");
  if (dev && dev.exitCode === null) await new Promise((resolve) => dev?.once("exit", resolve));
  await rm(root, { recursive: true, force: true });
}
