// `svc dev`: builds, serves with .env loaded, rebuilds and restarts on change, keeps serving through a broken save.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, runToEnd, type Spawned, SVC_BIN, spawnWithOutput } from "./helpers/processes.ts";
import { connectClient, tempDir } from "./helpers/projects.ts";

let root: Awaited<ReturnType<typeof tempDir>>;
let dev: Spawned | undefined;
let project: string;
let url: string;

const listeningCount = () => (dev?.output().match(/"msg":"listening"/g) ?? []).length;

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${dev?.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function description(): Promise<string | undefined> {
  const client = await connectClient(url);
  try {
    return (await client.listTools()).tools.find((t) => t.name === "env")?.description;
  } finally {
    await client.close();
  }
}

const envTool = (text: string) =>
  `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ description: ${JSON.stringify(text)}, handler: () => process.env.DEV_ONLY ?? "unset" });\n`;

beforeAll(async () => {
  root = await tempDir("dev");
  project = join(root.dir, "devproj");
  expect((await runToEnd(SVC_BIN, ["init", project], { cwd: root.dir })).code).toBe(0);
  await writeFile(join(project, ".env"), "DEV_ONLY=from-dotenv\n");
  await writeFile(join(project, "tools", "env.ts"), envTool("first"));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  dev = spawnWithOutput(SVC_BIN, ["dev", "--port", String(port)], { cwd: project });
  await until(() => listeningCount() === 1, "the first start");
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await root?.cleanup();
});

describe("svc dev", () => {
  it("serves a dev build with .env loaded", async () => {
    const client = await connectClient(url);
    expect((await client.callTool({ name: "env", arguments: {} })).content).toEqual([
      { type: "text", text: "from-dotenv" },
    ]);
    await client.close();
  });

  it("rebuilds and restarts when a source changes", async () => {
    await writeFile(join(project, "tools", "env.ts"), envTool("second"));
    await until(() => listeningCount() === 2, "the restart");
    expect(await description()).toBe("second");
  }, 90_000);

  it("keeps the running server when a rebuild fails", async () => {
    await writeFile(join(project, "tools", "env.ts"), "export default {{;\n");
    await until(() => dev?.output().includes("keeping the running server") ?? false, "the failed rebuild");
    expect(dev?.output()).toContain("tools/env.ts:1:");
    expect(await description()).toBe("second");
  }, 90_000);

  it("keeps the running server when the built components fail their check, reporting the problem once", async () => {
    const keeping = () => (dev?.output().match(/keeping the running server/g) ?? []).length;
    const before = keeping();
    // Compiles, but a tool without a description fails the check of the bundle; the new server, started while
    // the check ran, is stopped without its output.
    await writeFile(
      join(project, "tools", "env.ts"),
      `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ handler: () => "x" } as never);\n`,
    );
    await until(() => keeping() > before, "the failed check");
    expect(dev?.output()).toContain("tools/env.ts");
    expect(dev?.output()).not.toContain('"msg":"failed to start"');
    expect(await description()).toBe("second");
  }, 90_000);

  it("keeps the previous server serving when the new one fails at start, and says so", async () => {
    await writeFile(join(project, "tools", "env.ts"), envTool("third"));
    await until(() => listeningCount() === 3, "the reload after the fixed tool");
    expect(await description()).toBe("third");
    // Compiles, but configureAuth refuses the configuration when the server starts.
    await writeFile(
      join(project, "auth.ts"),
      `import { configureAuth, StaticTokenConfig } from "@svc-mcp/framework/auth";\nconfigureAuth(new StaticTokenConfig({ tokens: {} }));\n`,
    );
    await until(
      () =>
        dev
          ?.output()
          .includes("the new server failed to start (see above); the previous server keeps serving") ?? false,
      "the failed start",
    );
    expect(dev?.output()).toMatch(/"msg":"failed to start".*auth\.ts/);
    expect(await description()).toBe("third");
  }, 90_000);

  it("ignores editor temporary files", async () => {
    const rebuildLines = () =>
      dev
        ?.output()
        .split("\n")
        .filter((line) => line.includes("changed; rebuilding")) ?? [];
    const before = rebuildLines().length;
    for (const temp of [".env.ts.swp", "tools/env.ts~", "tools/.#env.ts", "4913", "tools/env.ts.tmp"]) {
      await writeFile(join(project, temp), "x");
    }
    // A real change afterwards: the rebuild line names every file that changed since the last one.
    await writeFile(join(project, "auth.ts"), "export {};\n");
    await until(() => listeningCount() === 4, "the reload after auth.ts was fixed");
    expect(rebuildLines().slice(before)).toEqual(["svc dev: auth.ts changed; rebuilding"]);
  }, 90_000);

  it("stops its server when it stops", async () => {
    await dev?.stop();
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  }, 30_000);
});
