// Profiles the gateway's pass-through path: the fast upstream, `svc-gateway start` under `node --cpu-prof` with one
// server and no auth, PROFILE_SECONDS (default 10) of JSON tools/call at 16 connections, then the profile's summary
// (cpu-profile-summary.ts). The .cpuprofile is kept in PROFILE_DIR (default a temporary directory) for a flame graph
// (Chrome DevTools, speedscope). PROFILE_PROXY=floor profiles the bench's floor proxy instead (bare-node-proxy.ts:
// node:http + an undici Pool and nothing else), to see where a Node proxy's cost goes before any of the gateway's work.
// Usage: node gateway/bench/profile-pass-through.ts
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, writeGatewayConfig } from "../test/conformance/spawn-gateway.ts";
import { echoCall, MCP_HEADERS } from "./bench-calls.ts";
import { summariseGatewayProfile } from "./cpu-profile-summary.ts";
import { measure } from "./load.ts";
import { spawnListening, spawnUpstream } from "./spawn-upstream.ts";

const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const dir = process.env.PROFILE_DIR ?? (await mkdtemp(join(tmpdir(), "svc-profile-")));
const upstream = await spawnUpstream("fast");
try {
  const profiling = { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` };
  const proxy =
    process.env.PROFILE_PROXY === "floor"
      ? await spawnListening("./bare-node-proxy.ts", [upstream.url], profiling).then((floor) => ({
          url: `${floor.url}/json/mcp`,
          stop: floor.stop,
        }))
      : await spawnGateway(await writeGatewayConfig(dir, { "fast-json": `${upstream.url}/json/mcp` }), {
          env: profiling,
        }).then((gateway) => ({ url: `${gateway.url}/fast-json/mcp`, stop: gateway.stop }));
  try {
    const target = { url: proxy.url, body: echoCall(), headers: { ...MCP_HEADERS } };
    const result = await measure(target, { concurrency: 16, durationMs: seconds * 1000, warmupMs: 1000 });
    console.log(`${result.rps.toFixed(0)} req/s, errors ${result.errors}`);
  } finally {
    await proxy.stop();
  }
  console.log(await summariseGatewayProfile(dir, Number(process.env.PROFILE_TOP ?? 30), seconds));
} finally {
  await upstream.stop();
}
