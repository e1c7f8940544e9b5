// Acceptance: the framework as a user gets it. `npm pack` the workspace, install the tarball into a project in
// the system's temp directory, and run what `svc init` tells the user to run there: `npm install`, a prod
// build, `svc run`, then an MCP SDK client calls the scaffolded tool. Nothing in that project may point into
// this repository, and its processes run with this repository off PATH.
import { lstat, mkdir, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import { delimiter, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  REPO_ROOT,
  runToEnd,
  type Spawned,
  spawnWithOutput,
  waitForListening,
} from "./helpers/processes.ts";
import { connectClient, tempDir } from "./helpers/projects.ts";

const repoRoot = REPO_ROOT.replace(/\/+$/, "");
/** The caller's PATH without this repository's bins: the project must find its own Node and svc. */
const pathWithoutRepo = (process.env.PATH ?? "")
  .split(delimiter)
  .filter((entry) => entry !== "" && !entry.startsWith(repoRoot))
  .join(delimiter);
const npmInstall = ["install", "--prefer-offline", "--no-audit", "--no-fund"];

let root: Awaited<ReturnType<typeof tempDir>>;
let tarball: string;
let project: string;
let initOutput: string;
let server: Spawned | undefined;
let client: Client | undefined;

async function run(command: string, args: string[], cwd: string, path = pathWithoutRepo) {
  const result = await runToEnd(command, args, { cwd, path });
  expect(result.code, `${command} ${args.join(" ")}:\n${result.output}`).toBe(0);
  return result.output;
}

beforeAll(async () => {
  root = await tempDir("pack");
  const tarballs = join(root.dir, "tarballs");
  await mkdir(tarballs);
  // Packing runs `prepack` (the build into dist/), with this repository's toolchain.
  await run("npm", ["pack", "-w", "framework", "--pack-destination", tarballs], REPO_ROOT, process.env.PATH);
  const [packed] = await readdir(tarballs);
  tarball = join(tarballs, packed as string);

  // A user's own installation of the CLI, to scaffold with.
  const cli = join(root.dir, "cli");
  await mkdir(cli);
  await writeFile(join(cli, "package.json"), '{ "private": true }\n');
  await run("npm", [...npmInstall, tarball], cli);
  project = join(root.dir, "tool-server");
  initOutput = await run(
    process.execPath,
    [join(cli, "node_modules", "@svc-mcp", "framework", "bin", "svc.js"), "init", "tool-server"],
    root.dir,
  );
  // The package is not on the registry: install the tarball in place of the dependency init wrote.
  await run("npm", [...npmInstall, tarball], project);
}, 300_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await server?.stop();
  await root?.cleanup();
});

describe("the packed framework in a project outside the repository", () => {
  it("ships compiled JavaScript, declarations and source maps, not TypeScript sources", async () => {
    const installed = join(project, "node_modules", "@svc-mcp", "framework");
    const files = await readdir(installed, { recursive: true });
    expect(files).toContain(join("dist", "index.js"));
    expect(files).toContain(join("dist", "index.d.ts"));
    expect(files).toContain(join("dist", "index.js.map"));
    expect(files.some((file) => file.startsWith("src/"))).toBe(false);
  });

  it("prints next steps that are the commands the user runs", () => {
    expect(initOutput.slice(initOutput.indexOf("Next:"))).toBe(
      "Next:\n  cd tool-server\n  npm install\n  npm run dev\n",
    );
  });

  it("builds for production and serves a tool an SDK client can call", { timeout: 120_000 }, async () => {
    const build = await run("npm", ["run", "build"], project);
    expect(build).toContain("svc: built tool-server (prod)");
    const port = await freePort();
    server = spawnWithOutput(join(project, "node_modules", ".bin", "svc"), ["run", "--port", String(port)], {
      cwd: project,
      path: `${join(project, "node_modules", ".bin")}${delimiter}${pathWithoutRepo}`,
    });
    const { url } = await waitForListening(server);
    client = await connectClient(url);
    const result = await client.callTool({ name: "hello", arguments: { name: "Ada", excited: true } });
    expect(result.content).toEqual([{ type: "text", text: "Hello, Ada!" }]);
  });

  it("has no path into this repository", async () => {
    const texts = [
      await readFile(join(project, "package.json"), "utf8"),
      await readFile(join(project, "package-lock.json"), "utf8"),
      await readFile(join(project, "dist", "manifest.json"), "utf8"),
      await readFile(join(project, "dist", "server.mjs"), "utf8"),
    ];
    const bin = join(project, "node_modules", ".bin");
    for (const name of await readdir(bin)) {
      const link = join(bin, name);
      if ((await lstat(link)).isSymbolicLink()) texts.push(await readlink(link));
    }
    for (const text of texts) expect(text).not.toContain(repoRoot);
    expect(JSON.parse(texts[0] as string).dependencies["@svc-mcp/framework"]).toMatch(/^file:/);
  });
});
