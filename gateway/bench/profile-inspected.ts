// Profiles the gateway's inspected path: the secured gateway (secured-gateway.ts: JWT, RBAC, rate limit, replay
// protection, audit) under `node --cpu-prof`, PROFILE_SECONDS (default 10) of the pii workload's tools/call (1 KB
// argument, 4 KB result) on PROFILE_ROUTE (default /bench-inspected/mcp: scrubbing and the firewall; /bench-pii/mcp
// scrubbing only, /bench-json/mcp neither) at 16 connections, in front of the SDK upstream, then the profile's
// summary (cpu-profile-summary.ts). The .cpuprofile is kept in PROFILE_DIR (default a temporary directory).
// Usage: node gateway/bench/profile-inspected.ts
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { summariseGatewayProfile } from "./cpu-profile-summary.ts";
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
  console.log(await summariseGatewayProfile(dir, Number(process.env.PROFILE_TOP ?? 40), seconds));
} finally {
  await upstream.stop();
}
