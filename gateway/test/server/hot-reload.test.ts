// Hot reload from a directory laid out the way the kubelet mounts a ConfigMap:
//   dir/..2026_x/config.yaml, dir/..data -> ..2026_x, dir/config.yaml -> ..data/config.yaml
// An update writes a new timestamped directory and atomically renames a new ..data symlink over the old.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { initializeRequest } from "svc-testkit/json-rpc";
import { KubeletConfigMapVolume } from "svc-testkit/kubelet-volume";
import { request } from "undici";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { type RunningGateway, startGateway } from "../../src/server/start-gateway.ts";
import { configYaml, connectClient, TEST_GATEWAY_ENV, type TestServer } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";

// Real servers and processes: generous limits, so a loaded CI machine slows these tests down instead of failing them.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

let dir: string;
let volume: KubeletConfigMapVolume;
let upstream: Upstream;
let gateway: RunningGateway;

/** What the kubelet does on a ConfigMap update. */
const kubeletSwap = (text: string): void => volume.write({ "config.yaml": text });

async function status(path: string): Promise<number> {
  const response = await request(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify(initializeRequest()),
  });
  await response.body.text();
  return response.statusCode;
}

async function reloads(result: "success" | "failure"): Promise<number> {
  const text = await (await request(`${gateway.url}/metrics`)).body.text();
  const match = new RegExp(`svc_gateway_config_reloads_total\\{result="${result}"\\} (\\d+)`).exec(text);
  return Number(match?.[1]);
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const servers = (...names: string[]): TestServer[] => names.map((name) => ({ name, url: upstream.url }));

beforeAll(async () => {
  upstream = await startUpstream({ stateful: true });
  dir = await mkdtemp(join(tmpdir(), "svc-gw-reload-"));
  volume = new KubeletConfigMapVolume(dir);
  kubeletSwap(configYaml(servers("a")));
  gateway = await startGateway({
    configPath: join(dir, "config.yaml"),
    host: "127.0.0.1",
    port: 0,
    // Polling off (TEST_GATEWAY_ENV): this proves the directory watch alone sees a ..data swap.
    env: TEST_GATEWAY_ENV,
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

test("a kubelet-style ..data swap is picked up by the directory watch", async () => {
  expect(await status("/a/mcp")).toBe(200);
  expect(await status("/b/mcp")).toBe(404);
  kubeletSwap(configYaml(servers("b")));
  await until(async () => (await status("/b/mcp")) === 200, "server b to appear");
  expect(await status("/a/mcp")).toBe(404);
  expect(await reloads("success")).toBe(1);
});

test("an invalid config is refused and counted; the last good one keeps serving and readiness stays 200", async () => {
  const failuresBefore = await reloads("failure");
  kubeletSwap('version: "2.0"\nservers: [{ name: a }]\n');
  await until(async () => (await reloads("failure")) === failuresBefore + 1, "the refused reload");
  expect(await status("/b/mcp")).toBe(200);
  expect((await request(`${gateway.url}/readiness`)).statusCode).toBe(200);
});

test("a request in flight finishes on the config it started with", async () => {
  kubeletSwap(configYaml(servers("c")));
  await until(async () => (await status("/c/mcp")) === 200, "server c");
  const { client } = await connectClient(`${gateway.url}/c/mcp`);
  let progressed: () => void = () => {};
  const gotProgress = new Promise<void>((resolve) => {
    progressed = resolve;
  });
  const call = client.callTool({ name: "gated", arguments: { steps: 1 } }, CallToolResultSchema, {
    onprogress: () => progressed(),
  });
  await gotProgress;
  kubeletSwap(configYaml(servers("d")));
  await until(async () => (await status("/d/mcp")) === 200, "server d");
  expect(await status("/c/mcp")).toBe(404);
  upstream.gate.release();
  expect((await call).content).toEqual([{ type: "text", text: "released" }]);
  await client.close();
});

test("reload() (what SIGHUP calls) reloads even an unchanged file", async () => {
  const before = await reloads("success");
  expect(await gateway.reload()).toBe(true);
  expect(await reloads("success")).toBe(before + 1);
});
