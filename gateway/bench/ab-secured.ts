// Compares two compiled builds of the gateway on the secured path (secured-gateway.ts: JWT, RBAC, the Redis rate limit,
// replay protection, audit), measured in alternation so both see the same load from whatever else shares the cores:
// AB_ROUNDS (default 6) rounds of AB_SECONDS (default 3) of the JSON tools/call at AB_CONNECTIONS (default 16), in
// front of the fast upstream; each round swaps which build goes first. Prints req/s, p50 and the CPU per request of
// each gateway and of its own redis-server, then the medians. Each build is a copy of gateway/dist kept inside
// gateway/ (so its packages resolve), e.g. `npm run build -w gateway && cp -r gateway/dist gateway/dist-before`.
// Usage: AB_A=dist-before AB_B=dist node gateway/bench/ab-secured.ts
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { echoCall, MCP_HEADERS } from "./bench-calls.ts";
import { measure } from "./load.ts";
import { cpuMs } from "./process-cpu.ts";
import { type SecuredGateway, startSecuredGateway } from "./secured-gateway.ts";
import { spawnUpstream } from "./spawn-upstream.ts";

const seconds = Number(process.env.AB_SECONDS ?? 3);
const rounds = Number(process.env.AB_ROUNDS ?? 6);
const connections = Number(process.env.AB_CONNECTIONS ?? 16);
const builds = { A: process.env.AB_A ?? "dist-before", B: process.env.AB_B ?? "dist" };
const program = (build: string) => fileURLToPath(new URL(`../${build}/cli/main.js`, import.meta.url));

const headers = MCP_HEADERS;
const body = echoCall();

interface Round {
  rps: number;
  p50Ms: number;
  gatewayUs: number;
  redisUs: number;
}

async function measureRound(gateway: SecuredGateway): Promise<Round> {
  let gatewayMs = 0;
  let redisMs = 0;
  const result = await measure(
    {
      url: `${gateway.url}/bench-json/mcp`,
      body,
      headers,
      headerSets: gateway.authHeaders.map((auth) => ({ ...headers, ...auth })),
    },
    {
      concurrency: connections,
      durationMs: seconds * 1000,
      warmupMs: 300,
      onMeasureStart: () => {
        gatewayMs = cpuMs(gateway.pid) ?? Number.NaN;
        redisMs = cpuMs(gateway.redisPid) ?? Number.NaN;
      },
      onMeasureEnd: () => {
        gatewayMs = (cpuMs(gateway.pid) ?? Number.NaN) - gatewayMs;
        redisMs = (cpuMs(gateway.redisPid) ?? Number.NaN) - redisMs;
      },
    },
  );
  const perRequestUs = (ms: number) => (ms * 1000) / Math.max(1, result.requests + result.errors);
  if (result.errors > 0) console.log(`  ${result.errors} errors`);
  return {
    rps: result.rps,
    p50Ms: result.p50Ms,
    gatewayUs: perRequestUs(gatewayMs),
    redisUs: perRequestUs(redisMs),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const line = (round: Round) =>
  `${round.rps.toFixed(0).padStart(6)} req/s  p50 ${round.p50Ms.toFixed(2)} ms  CPU/req gateway ${round.gatewayUs.toFixed(0).padStart(4)} µs redis-server ${round.redisUs.toFixed(1).padStart(5)} µs`;

const dir = await mkdtemp(join(tmpdir(), "svc-ab-"));
const upstream = await spawnUpstream("fast");
const gateways: Partial<Record<"A" | "B", SecuredGateway>> = {};
try {
  for (const name of ["A", "B"] as const) {
    gateways[name] = await startSecuredGateway(dir, upstream.url, 64, {
      name: `ab-${name}`,
      program: program(builds[name]),
    });
  }
  const results: Record<"A" | "B", Round[]> = { A: [], B: [] };
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? (["A", "B"] as const) : (["B", "A"] as const)) {
      const gateway = gateways[name];
      if (gateway === undefined) continue;
      const result = await measureRound(gateway);
      results[name].push(result);
      console.log(`round ${round + 1} ${name} (${builds[name]}): ${line(result)}`);
    }
  }
  for (const name of ["A", "B"] as const) {
    const runs = results[name];
    const medians: Round = {
      rps: median(runs.map((run) => run.rps)),
      p50Ms: median(runs.map((run) => run.p50Ms)),
      gatewayUs: median(runs.map((run) => run.gatewayUs)),
      redisUs: median(runs.map((run) => run.redisUs)),
    };
    console.log(`median ${name} (${builds[name]}): ${line(medians)}`);
  }
} finally {
  await gateways.A?.stop();
  await gateways.B?.stop();
  await upstream.stop();
}
