// `npm start` runs gateway/examples/quickstart/start.ts: the example server and the gateway in front of it.
// This runs that script as a process, reads the printed URL, and uses it the way a user would.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, expect, test, vi } from "vitest";
import { connectClient } from "../proxy/support/gateway.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const SCRIPT = fileURLToPath(new URL("../../examples/quickstart/start.ts", import.meta.url));
let child: ChildProcess | undefined;
afterAll(() => {
  if (child !== undefined && child.exitCode === null) child.kill("SIGKILL");
});

test("the quick start prints an MCP URL that works through the gateway, and stops on Ctrl-C", async () => {
  child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, PORT: "0", LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "pipe"],
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
});
