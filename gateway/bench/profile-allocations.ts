// Bytes the compiled gateway allocates per proxied request, and who allocates them: the fast upstream, the gateway
// with one server and no auth, JSON tools/call at 16 connections (2 s warm-up, then PROFILE_SECONDS, default 4, under
// the sampling heap profiler of allocation-sampler.mjs), then the total per request and the top allocating
// functions (PROFILE_TOP, default 30). Steadier than CPU per request on a shared machine: it does not move with the
// load. The .heapprofile stays in PROFILE_DIR (default a temporary directory; Chrome DevTools opens it).
// Usage: node gateway/bench/profile-allocations.ts
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnGateway, writeGatewayConfig } from "../test/conformance/spawn-gateway.ts";
import { echoCall, MCP_HEADERS } from "./bench-calls.ts";
import { buildCompiledGateway } from "./compiled-gateway.ts";
import { measure } from "./load.ts";
import { spawnUpstream } from "./spawn-upstream.ts";

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

const seconds = Number(process.env.PROFILE_SECONDS ?? 4);
const top = Number(process.env.PROFILE_TOP ?? 30);
const dir = process.env.PROFILE_DIR ?? (await mkdtemp(join(tmpdir(), "svc-allocations-")));
const sampler = fileURLToPath(new URL("allocation-sampler.mjs", import.meta.url));
const program = await buildCompiledGateway();
const upstream = await spawnUpstream("fast");
try {
  const config = await writeGatewayConfig(dir, { "fast-json": `${upstream.url}/json/mcp` });
  const gateway = await spawnGateway(config, {
    program,
    env: { NODE_OPTIONS: `--import=${sampler}`, ALLOCATION_PROFILE_DIR: dir },
  });
  const target = { url: `${gateway.url}/fast-json/mcp`, body: echoCall(), headers: { ...MCP_HEADERS } };
  let requests: number;
  try {
    await measure(target, { concurrency: 16, durationMs: 2000, warmupMs: 0 });
    gateway.process.kill("SIGUSR2");
    await new Promise((resolve) => setTimeout(resolve, 200));
    requests = (await measure(target, { concurrency: 16, durationMs: seconds * 1000, warmupMs: 0 })).requests;
  } finally {
    await gateway.stop();
  }
  const file = join(dir, `allocations-${gateway.process.pid}.heapprofile`);
  const profile = JSON.parse(await readFile(file, "utf8")) as { head: SamplingNode };
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(dist|node_modules)\//, "$1/")}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  console.log(`${(total / requests / 1024).toFixed(1)} KiB allocated per request (${requests} requests)`);
  console.log(`profile: ${file}\n\nallocated bytes by function:`);
  for (const [name, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${name}`);
  }
} finally {
  await upstream.stop();
}
