// The project layout, the naming rule, and build errors that name the files (built for real with esbuild).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildError, buildProject } from "../src/build/build-project.ts";
import { nameFromPath } from "../src/project/naming.ts";
import { deprecationWarning, SettingsError } from "../src/project/settings.ts";
import type { Spawned } from "./helpers/processes.ts";
import { serveBuilt, tempDir, writeProject } from "./helpers/projects.ts";

const tool = (description: string, extra = "") =>
  `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ ${extra} description: ${JSON.stringify(description)}, handler: () => "ok" });\n`;

let root: Awaited<ReturnType<typeof tempDir>>;
let server: Spawned | undefined;

beforeAll(async () => {
  root = await tempDir("build");
});

afterAll(async () => {
  await server?.stop();
  await root?.cleanup();
});

describe("naming rule", () => {
  it("derives names from the path inside the component folder", () => {
    expect(nameFromPath("hello.ts")).toBe("hello");
    expect(nameFromPath("payments/charge.ts")).toBe("payments_charge");
    expect(nameFromPath("admin/index.ts")).toBe("admin");
    expect(nameFromPath("get weather.ts")).toBe("get_weather");
    expect(nameFromPath("a/b-c/d.mts")).toBe("a_b-c_d");
  });
});

describe("a valid project", () => {
  let dir: string;

  beforeAll(async () => {
    dir = join(root.dir, "good");
    await writeProject(dir, {
      "svc.json": { name: "good", health_check_response: "legacy body" },
      "tools/payments/charge.ts": tool("Charges a card"),
      "tools/admin/index.ts": tool("Admin things"),
      "tools/renamed.ts": tool("Has its own name", `name: "custom_name",`),
      "tools/_shared.ts": "export const notAComponent = 1;\n",
      "tools/charge.test.ts": "export {};\n",
      "lib/util.ts": "export const helper = () => 1;\n",
      "resources/doc.ts": `import { defineResource } from "@svc-mcp/framework";\nexport default defineResource({ uri: "docs://x", description: "A doc", read: () => "x" });\n`,
      "health.ts": `export async function check() { return { status: "pass", services: { db: "up" } }; }\n`,
      "readiness.ts": `export function check() { return { status: "pass", degraded: true, message: "warming up" }; }\n`,
    });
  }, 30_000);

  it("builds the components named by the rule, skipping helpers and tests", async () => {
    const manifest = await buildProject(dir, "prod");
    expect(manifest.components.tools.map((t) => `${t.name}=${t.file}`).sort()).toEqual([
      "admin=tools/admin/index.ts",
      "custom_name=tools/renamed.ts",
      "payments_charge=tools/payments/charge.ts",
    ]);
    expect(manifest.components.resources).toEqual([
      { name: "doc", file: "resources/doc.ts", description: "A doc", uri: "docs://x" },
    ]);
    expect(manifest.files).toEqual({ auth: false, health: true, readiness: true });
    expect(manifest.warnings).toEqual([deprecationWarning("health_check_response")]);
  }, 120_000);

  it("serves health.ts and readiness.ts from the project root; legacy fields warn", async () => {
    const served = await serveBuilt(dir);
    server = served.server;
    const health = await fetch(`${served.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "pass", services: { db: "up" } });
    const ready = await fetch(`${served.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ degraded: true, message: "warming up" });
    expect(server.output()).toContain("svc.json field 'health_check_response' is deprecated");
    await server.stop();
  }, 60_000);
});

describe("build errors name the files", () => {
  it("reports every broken component at once and leaves no dist/", async () => {
    const dir = join(root.dir, "broken");
    await writeProject(dir, {
      "svc.json": { name: "broken" },
      "tools/a.ts": tool("First", `name: "same",`),
      "tools/b.ts": tool("Second", `name: "same",`),
      "tools/nodesc.ts": `import { defineTool } from "@svc-mcp/framework";\nexport default defineTool({ handler: () => "x" } as never);\n`,
      "tools/nothing.ts": "export const x = 1;\n",
      "prompts/empty.ts": "export {};\n",
      "prompts/named.ts": `import { definePrompt } from "@svc-mcp/framework";\nexport const p = definePrompt({ description: "d", render: () => "x" });\n`,
      "resources/wrong.ts": tool("A tool in resources/"),
      "health.ts": "export function probe() { return true; }\n",
    });
    const error = await buildProject(dir, "prod").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BuildError);
    const message = (error as Error).message;
    expect(message).toContain("duplicate tool name 'same' in tools/a.ts, tools/b.ts");
    expect(message).toContain("tools/nodesc.ts: missing description");
    expect(message).toContain("tools/nothing.ts: nothing usable exported");
    expect(message).toContain("prompts/empty.ts: nothing usable exported");
    expect(message).toContain(
      "prompts/named.ts: nothing usable exported: a prompt module must `export default definePrompt({...})`, but the definition is exported as 'p'",
    );
    expect(message).toContain(
      "resources/wrong.ts: nothing usable exported: a resource module must `export default defineResource({...})`, but its default export is a tool (move the file to tools/)",
    );
    expect(message).toContain("health.ts: must export a function check()");
    expect(existsSync(join(dir, "dist"))).toBe(false);
  }, 120_000);

  it("reports a module that does not compile with its file and line", async () => {
    const dir = join(root.dir, "syntax");
    await writeProject(dir, { "svc.json": { name: "syntax" }, "tools/bad.ts": "export default {{;\n" });
    const error = await buildProject(dir, "dev").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BuildError);
    expect((error as Error).message).toMatch(/^tools\/bad\.ts:1:\d+: /m);
  }, 60_000);

  it("validates svc.json with messages naming the field", async () => {
    const dir = join(root.dir, "settings");
    await writeProject(dir, {
      "svc.json": { name: "", opentelemetry_enabled: "yes", detailed_tracing: true, colour: "blue" },
    });
    const error = await buildProject(dir, "prod").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as Error).message;
    expect(message).toContain("svc.json: unknown field(s) colour");
    expect(message).toMatch(/svc\.json: name: /);
    expect(message).toMatch(/svc\.json: opentelemetry_enabled: .*boolean/);
    await expect(buildProject(join(root.dir, "missing"), "prod")).rejects.toThrow(/svc\.json: not found/);
  });
});
