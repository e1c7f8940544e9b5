// `npm start` runs gateway/examples/quickstart/start.ts: the example server and the gateway in front of it.
// This runs that script as a process, reads the printed URL, and uses it the way a user would.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, expect, test, vi } from "vitest";
import { connectClient } from "../proxy/support/gateway.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const SCRIPT = fileURLToPath(new URL("../../examples/quickstart/start.ts", import.meta.url));
const GATEWAY_BIN = fileURLToPath(new URL("../../bin/svc-gateway.js", import.meta.url));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
});

test("the quick start prints an MCP URL that works through the gateway, and stops on Ctrl-C", async () => {
  // Its own temp directory: the audit file's default place, apart from a quick start the user may be running.
  const temp = mkdtempSync(join(tmpdir(), "svc-quickstart-test-"));
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: "0",
    LOG_LEVEL: "info",
    TMPDIR: temp,
  };
  delete env.SVC_AUDIT_FILE;
  child = spawn(process.execPath, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = once(child, "exit");
  let banner = "";
  const url = await new Promise<string>((resolve, reject) => {
    child?.stderr?.on("data", (chunk: Buffer) => {
      banner += chunk.toString();
      const match = /Paste this URL[^\n]*\n\s*\n\s*(http:\/\/127\.0\.0\.1:\d+\/demo\/mcp)/.exec(banner);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    child?.once("exit", (code) => reject(new Error(`quick start exited (${code}): ${banner}`)));
  });

  // It runs without an identity provider, so it must say that everyone gets in.
  expect(banner).toContain("Anonymous access is ON (SVC_ALLOW_ANONYMOUS=true)");
  const { client } = await connectClient(url);
  expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
    "add",
    "countdown",
    "echo",
  ]);
  expect((await client.callTool({ name: "add", arguments: { a: 2, b: 3 } })).content).toEqual([
    { type: "text", text: "5" },
  ]);
  const progress: number[] = [];
  const result = await client.callTool({ name: "countdown", arguments: { n: 1 } }, CallToolResultSchema, {
    onprogress: (p) => progress.push(p.progress),
  });
  expect(progress).toEqual([1]);
  expect(result.content).toEqual([{ type: "text", text: "liftoff" }]);
  await client.close();

  child.kill("SIGINT");
  expect((await exited)[0]).toBe(0);

  // The banner names the audit file; it holds the trail, which verifies, and stdout holds none of it.
  const auditFile = /Audit trail: (\S+)/.exec(banner)?.[1];
  expect(auditFile).toBe(join(temp, "svc-quickstart-audit.jsonl"));
  const trail = readFileSync(auditFile as string, "utf8")
    .trim()
    .split("\n");
  expect(trail.length).toBeGreaterThanOrEqual(3);
  expect(stdout).not.toContain("prev_hash");
  const verified = spawnSync(process.execPath, [GATEWAY_BIN, "audit", "verify", auditFile as string], {
    encoding: "utf8",
  });
  expect(verified.stderr).toBe("");
  expect(verified.status).toBe(0);
  rmSync(temp, { recursive: true, force: true });
}, 60_000);
