// Profiles the gateway's inspected path: the secured gateway (secured-gateway.ts: JWT, RBAC, rate limit, replay
// protection, audit) under `node --cpu-prof`, PROFILE_SECONDS (default 10) of the pii workload's tools/call (1 KB
// argument, 4 KB result) on PROFILE_ROUTE (default /bench-inspected/mcp: scrubbing and the firewall; /bench-pii/mcp
// scrubbing only, /bench-json/mcp neither) at 16 connections, in front of the SDK upstream, then the profile's
// summary (cpu-profile-summary.ts). The .cpuprofile is kept in PROFILE_DIR (default a temporary directory).
// Usage: node gateway/bench/profile-inspected.ts
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { summarise } from "./cpu-profile-summary.ts";
import { measure } from "./load.ts";
import { piiText } from "./pii-workload.ts";
import { startSecuredGateway } from "./secured-gateway.ts";
import { spawnUpstream } from "./spawn-upstream.ts";

const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
const route = process.env.PROFILE_ROUTE ?? "/bench-inspected/mcp";
const dir = process.env.PROFILE_DIR ?? (await mkdtemp(join(tmpdir(), "svc-profile-")));
const upstream = await spawnUpstream("sdk");
try {
  const gateway = await startSecuredGateway(dir, upstream.url, 64, {
    env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` },
  });
  try {
    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    };
    const result = await measure(
      {
        url: `${gateway.url}${route}`,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "report", arguments: { text: piiText } },
        }),
        headers,
        // A header set replaces the headers: each user's token with the common ones.
        headerSets: gateway.authHeaders.map((auth) => ({ ...headers, ...auth })),
      },
      { concurrency: 16, durationMs: seconds * 1000, warmupMs: 1000 },
    );
    console.log(`${result.rps.toFixed(0)} req/s, errors ${result.errors}`);
  } finally {
    await gateway.stop();
  }
  const profiles = (await readdir(dir)).filter((name) => name.endsWith(".cpuprofile"));
  // The gateway is the one process started with --cpu-prof that served the load: the largest profile.
  const sized = await Promise.all(
    profiles.map(async (name) => ({ name, text: await readFile(join(dir, name), "utf8") })),
  );
  const largest = sized.sort((a, b) => b.text.length - a.text.length)[0];
  if (!largest) throw new Error(`no .cpuprofile written in ${dir}`);
  console.log(`profile: ${join(dir, largest.name)}\n`);
  console.log(summarise(JSON.parse(largest.text), Number(process.env.PROFILE_TOP ?? 40), seconds));
} finally {
  await upstream.stop();
}
