// Profiles the gateway's pass-through path: the fast upstream, `svc-gateway start` under `node --cpu-prof` with one
// server and no auth, PROFILE_SECONDS (default 10) of JSON tools/call at 16 connections, then the profile's summary
// (cpu-profile-summary.ts). The .cpuprofile is kept in PROFILE_DIR (default a temporary directory) for a flame graph
// (Chrome DevTools, speedscope). Usage: node gateway/bench/profile-pass-through.ts
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnGateway, writeGatewayConfig } from "../test/conformance/spawn-gateway.ts";
import { echoCall, MCP_HEADERS } from "./bench-calls.ts";
import { summariseGatewayProfile } from "./cpu-profile-summary.ts";
import { measure } from "./load.ts";
import { spawnUpstream } from "./spawn-upstream.ts";

const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const dir = process.env.PROFILE_DIR ?? (await mkdtemp(join(tmpdir(), "svc-profile-")));
const upstream = await spawnUpstream("fast");
try {
  const config = await writeGatewayConfig(dir, { "fast-json": `${upstream.url}/json/mcp` });
  const gateway = await spawnGateway(config, {
    env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` },
  });
  try {
    const target = { url: `${gateway.url}/fast-json/mcp`, body: echoCall(), headers: { ...MCP_HEADERS } };
    const result = await measure(target, { concurrency: 16, durationMs: seconds * 1000, warmupMs: 1000 });
    console.log(`${result.rps.toFixed(0)} req/s, errors ${result.errors}`);
  } finally {
    await gateway.stop();
  }
  console.log(await summariseGatewayProfile(dir, Number(process.env.PROFILE_TOP ?? 30), seconds));
} finally {
  await upstream.stop();
}
