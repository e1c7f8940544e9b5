// Acceptance: `svc init DIR && cd DIR && svc build prod && svc run --port N` in a temp dir outside the repository,
// through the workspace's real `svc` bin, then an MCP SDK client lists and calls the scaffolded tool.
import { existsSync } from "node:fs";
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freePort,
  REPO_ROOT,
  runToEnd,
  type Spawned,
  SVC_BIN,
  spawnWithOutput,
  waitForListening,
} from "./helpers/processes.ts";
import { connectClient, tempDir } from "./helpers/projects.ts";

const SECRET = "s3cr3t-value-that-must-never-reach-dist";

let root: Awaited<ReturnType<typeof tempDir>>;
let project: string;
let initOutput: string;
const running: Spawned[] = [];
const clients: Client[] = [];

async function svcRun(): Promise<{ url: string; spawned: Spawned }> {
  const port = await freePort();
  const spawned = spawnWithOutput(SVC_BIN, ["run", "--port", String(port)], { cwd: project });
  running.push(spawned);
  const { url } = await waitForListening(spawned);
  expect(url).toBe(`http://127.0.0.1:${port}`);
  return { url, spawned };
}

async function stopAll(): Promise<void> {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  await Promise.all(running.splice(0).map((s) => s.stop()));
}

async function distContains(text: string): Promise<string[]> {
  const dist = join(project, "dist");
  const hits: string[] = [];
  for (const file of await readdir(dist, { recursive: true })) {
    const path = join(dist, file);
    if ((await readFile(path).catch(() => Buffer.alloc(0))).includes(text)) hits.push(file);
  }
  return hits;
}

beforeAll(async () => {
  root = await tempDir("init");
  project = join(root.dir, "hello-server");
  const init = await runToEnd(SVC_BIN, ["init", project], { cwd: root.dir });
  expect(init.code, init.output).toBe(0);
  initOutput = init.output;
  await writeFile(join(project, ".env"), `GREETING_SECRET=${SECRET}\n`);
  await writeFile(
    join(project, "tools", "secret.ts"),
    `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ description: "Reveals whether the secret is set", handler: () => process.env.GREETING_SECRET ?? "unset" });\n`,
  );
}, 60_000);

afterAll(async () => {
  await stopAll();
  await root?.cleanup();
});

describe("svc init → build prod → run", () => {
  it("scaffolds every file the project needs", async () => {
    for (const file of [
      "svc.json",
      "tools/hello.ts",
      "resources/about.ts",
      "prompts/introduce.ts",
      "health.ts",
      "readiness.ts",
      "auth.ts",
      "Dockerfile",
      "mcpserver.yaml",
      ".gitignore",
    ]) {
      expect(existsSync(join(project, file)), file).toBe(true);
    }
    const manifest = await readFile(join(project, "mcpserver.yaml"), "utf8");
    expect(manifest).toContain("apiVersion: mcp.svc.dev/v1alpha1");
    expect(manifest).toContain("kind: McpServer");
    expect(manifest).toContain("name: hello-server");
  });

  it("writes a package.json that installs the framework by its package name, with the Node 24 pin", async () => {
    const framework = JSON.parse(await readFile(join(REPO_ROOT, "framework", "package.json"), "utf8"));
    const repository = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8"));
    const written = JSON.parse(await readFile(join(project, "package.json"), "utf8"));
    expect(written.name).toBe("hello-server");
    expect(written.dependencies).toEqual({ [framework.name]: `^${framework.version}` });
    // The scaffold pins the same Node as this repository does.
    expect(written.devDependencies.node).toBe(repository.devDependencies.node);
    expect(Object.keys(written.scripts).sort()).toEqual(["build", "dev", "start"]);
    expect(await readFile(join(project, "tools", "hello.ts"), "utf8")).toContain(`from "${framework.name}"`);
    expect(await readFile(join(project, "README.md"), "utf8")).toMatch(/^# hello-server\n/);
  });

  it("prints exactly the commands that work next", () => {
    expect(initOutput.slice(initOutput.indexOf("Next:"))).toBe(
      `Next:\n  cd ${project}\n  npm install\n  npm run dev\n`,
    );
  });

  it("builds prod without any install and without the .env secret", async () => {
    const build = await runToEnd(SVC_BIN, ["build", "prod"], { cwd: project });
    expect(build.code, build.output).toBe(0);
    expect(existsSync(join(project, "node_modules"))).toBe(false);
    const manifest = JSON.parse(await readFile(join(project, "dist", "manifest.json"), "utf8"));
    expect(manifest.mode).toBe("prod");
    expect(manifest.components.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      "hello",
      "secret",
    ]);
    expect(await distContains(SECRET)).toEqual([]);
  }, 120_000);

  it("serves /mcp, /health and /ready; a client lists and calls the scaffolded tool", async () => {
    const { url, spawned } = await svcRun();
    // The scaffold's auth.ts configures nothing: one warning line says so.
    const warnings = spawned
      .output()
      .split("\n")
      .filter((line) => line.includes("no auth configured"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] ?? "{}")).toMatchObject({
      level: "warn",
      msg: "no auth configured: /mcp is open",
    });
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "pass" });
    const ready = await fetch(`${url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: "pass" });
    expect((await fetch(`${url}/mcp/`, { method: "POST" })).status).toBe(404);

    const client = await connectClient(url);
    clients.push(client);
    const { tools } = await client.listTools();
    const hello = tools.find((t) => t.name === "hello");
    expect(hello?.description).toBe("Greets someone by name.");
    expect(hello?.inputSchema.properties).toHaveProperty("name");
    const result = await client.callTool({ name: "hello", arguments: { name: "Ada", excited: true } });
    expect(result.content).toEqual([{ type: "text", text: "Hello, Ada!" }]);
    const invalid = await client.callTool({ name: "hello", arguments: {} });
    expect(invalid.isError).toBe(true);
    // prod never reads .env
    expect((await client.callTool({ name: "secret", arguments: {} })).content).toEqual([
      { type: "text", text: "unset" },
    ]);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(["info://hello-server/about"]);
    const prompt = await client.getPrompt({ name: "introduce", arguments: { name: "Ada" } });
    expect(prompt.messages[0]?.content).toMatchObject({ type: "text" });
    await stopAll();
  }, 120_000);

  it("rebuilds a stale dist/ and says so; a dev build loads .env at run time only", async () => {
    const hello = join(project, "tools", "hello.ts");
    await writeFile(
      hello,
      (await readFile(hello, "utf8")).replace(
        'description: "Greets someone by name."',
        'description: "Greets warmly."',
      ),
    );
    const build = await runToEnd(SVC_BIN, ["build", "dev"], { cwd: project });
    expect(build.code, build.output).toBe(0);
    expect(await distContains(SECRET)).toEqual([]);
    await writeFile(hello, (await readFile(hello, "utf8")).replace("Greets warmly.", "Greets very warmly."));

    const { url, spawned } = await svcRun();
    expect(spawned.output()).toMatch(
      /dist\/ is stale: sources changed since the last build \(tools\/hello\.ts changed\); rebuilding \(dev\)/,
    );
    const client = await connectClient(url);
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === "hello")?.description).toBe("Greets very warmly.");
    expect((await client.callTool({ name: "secret", arguments: {} })).content).toEqual([
      { type: "text", text: SECRET },
    ]);
    expect(await distContains(SECRET)).toEqual([]);
    await stopAll();
  }, 120_000);

  it("answers --help for every command", async () => {
    for (const command of ["init", "build", "run", "dev"]) {
      const help = await runToEnd(SVC_BIN, [command, "--help"], { cwd: root.dir });
      expect(help.code).toBe(0);
      expect(help.output).toContain(`Usage: svc ${command}`);
    }
    const elsewhere = await runToEnd(SVC_BIN, ["run", "--project", join(root.dir, "nope")], { cwd: project });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.output).toContain(`${join(root.dir, "nope", "svc.json")}: not found`);
    const bad = await runToEnd(SVC_BIN, ["run", "--port", "http"], { cwd: project });
    expect(bad.code).toBe(2);
    expect(bad.output).toContain("--port: 'http' is not a port number");
  }, 60_000);
});
