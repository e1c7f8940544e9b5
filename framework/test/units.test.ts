// Small pure pieces: .env parsing, staleness reasons, project names, result conversion.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FRAMEWORK_VERSION } from "../src/build/framework-location.ts";
import { type Manifest, staleReason } from "../src/build/manifest.ts";
import { hashSources, sourceChanges } from "../src/build/sources.ts";
import { loadEnvFile } from "../src/cli/env-file.ts";
import { projectName } from "../src/cli/init.ts";
import { toPromptResult, toResourceResult, toToolResult } from "../src/runtime/results.ts";
import { tempDir, writeProject } from "./helpers/projects.ts";

let root: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  root = await tempDir("units");
});
afterAll(() => root.cleanup());

describe(".env", () => {
  it("reads KEY=value lines with comments, quotes and export", async () => {
    await writeFile(
      join(root.dir, ".env"),
      "# comment\nA=1\nexport B=\"two words\"\nC='x#y'\nD=plain # trailing\n\nE=\n",
    );
    expect(loadEnvFile(root.dir).values).toEqual({ A: "1", B: "two words", C: "x#y", D: "plain", E: "" });
  });

  it("names the file and line of a bad line", async () => {
    const dir = join(root.dir, "bad");
    await writeProject(dir, { ".env": "OK=1\nnot a pair\n" });
    expect(() => loadEnvFile(dir)).toThrow(`${join(dir, ".env")}:2: expected KEY=value`);
  });
});

describe("staleness", () => {
  it("lists added, changed and removed sources", () => {
    expect(sourceChanges({ "a.ts": "1", "b.ts": "2" }, { "a.ts": "1", "b.ts": "3", "c.ts": "4" })).toBe(
      "b.ts changed, c.ts added",
    );
    expect(sourceChanges({ "a.ts": "1" }, {})).toBe("a.ts removed");
    expect(sourceChanges({ "a.ts": "1" }, { "a.ts": "1" })).toBeUndefined();
  });

  it("ignores .env, dist/ and node_modules/, and notices another framework version", async () => {
    const dir = join(root.dir, "stale");
    await writeProject(dir, {
      "svc.json": { name: "s" },
      ".env": "X=1",
      "dist/server.mjs": "",
      "node_modules/x/index.js": "",
      "tools/t.ts": "",
    });
    const sources = await hashSources(dir);
    expect(Object.keys(sources).sort()).toEqual(["svc.json", "tools/t.ts"]);
    const manifest = { framework: FRAMEWORK_VERSION, sources } as Manifest;
    expect(await staleReason(dir, manifest)).toBeUndefined();
    expect(await staleReason(dir, { ...manifest, framework: "0.0.0" })).toBe(
      `dist/ was built by svc 0.0.0, this is ${FRAMEWORK_VERSION}`,
    );
    expect(await staleReason(dir, undefined)).toBe("dist/ has not been built");
  });
});

describe("svc init names", () => {
  it("makes a Kubernetes-safe name from the directory", () => {
    expect(projectName("/tmp/My Server_2")).toBe("my-server-2");
    expect(projectName("/tmp/---")).toBe("mcp-server");
  });
});

describe("handler results", () => {
  it("converts the simple forms", () => {
    expect(toToolResult("hi")).toEqual({ content: [{ type: "text", text: "hi" }] });
    expect(toToolResult({ a: 1 })).toEqual({
      content: [{ type: "text", text: '{"a":1}' }],
      structuredContent: { a: 1 },
    });
    expect(toToolResult([1, 2])).toEqual({ content: [{ type: "text", text: "[1,2]" }] });
    expect(toResourceResult(new Uint8Array([1, 2]), "x://b", undefined)).toEqual({
      contents: [{ uri: "x://b", mimeType: "application/octet-stream", blob: "AQI=" }],
    });
    expect(toResourceResult({ k: "v" }, "x://j", undefined).contents[0]).toMatchObject({
      mimeType: "application/json",
    });
    expect(toPromptResult("go", "d")).toEqual({
      description: "d",
      messages: [{ role: "user", content: { type: "text", text: "go" } }],
    });
  });
});
