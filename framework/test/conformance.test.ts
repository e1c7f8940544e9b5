// The MCP conformance suite (--suite all, every server scenario) against the built framework/examples/conformance.
// Goal and current state: no expected failures. Were one ever needed, it would go in
// examples/conformance/expected-failures.yaml with a reason per entry, and be passed to the suite here.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildProject } from "../src/build/build-project.ts";
import { BIN_DIR, REPO_ROOT, runToEnd, type Spawned } from "./helpers/processes.ts";
import { serveBuilt } from "./helpers/projects.ts";

const EXAMPLE = fileURLToPath(new URL("../examples/conformance", import.meta.url));
const EXPECTED_FAILURES = `${EXAMPLE}/expected-failures.yaml`;

let server: Spawned | undefined;
let output = "";
let code: number | null = null;

beforeAll(async () => {
  await buildProject(EXAMPLE, "prod");
  const served = await serveBuilt(EXAMPLE);
  server = served.server;
  // The suite's URL must say localhost: its DNS-rebinding scenario checks what a loopback server accepts.
  const url = `${served.url.replace("127.0.0.1", "localhost")}/mcp`;
  const args = ["server", "--url", url, "--suite", "all"];
  if (existsSync(EXPECTED_FAILURES)) args.push("--expected-failures", EXPECTED_FAILURES);
  ({ code, output } = await runToEnd(`${BIN_DIR}/conformance`, args, { cwd: REPO_ROOT }));
}, 240_000);

afterAll(async () => {
  await server?.stop();
});

describe("MCP conformance suite against framework/examples/conformance", () => {
  it("runs every server scenario and passes every check", () => {
    const summary = output.slice(output.lastIndexOf("=== SUMMARY ==="));
    const scenarios = summary.match(/^[✓✗] \S+: \d+ passed, \d+ failed$/gm) ?? [];
    expect(scenarios.length, summary).toBeGreaterThanOrEqual(32);
    const failed = scenarios.filter((line) => !/ 0 failed$/.test(line));
    expect(failed, summary).toEqual([]);
    const total = /Total: (\d+) passed, (\d+) failed/.exec(summary);
    expect(Number(total?.[1]), summary).toBeGreaterThanOrEqual(44);
    expect(Number(total?.[2]), summary).toBe(0);
    expect(code, summary).toBe(0);
  });
});
