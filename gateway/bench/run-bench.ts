// `npm run bench`: the gateway's pass-through cost on loopback. One stateless SDK upstream, measured
//   direct   → upstream
//   gateway  → svc-gateway start (its own process) → upstream
//   nginx    → nginx, 1 worker (when installed)   → upstream
//   secured  → svc-gateway start with JWT auth + RBAC + Redis rate limit + replay + audit → upstream
//   exported → a second secured gateway with every audit exporter on (search index, OTLP logs, SIEM), its receivers
//              on loopback in a process of their own (not the load generator's, which they would slow): export is off
//              the request path, so it should keep ≥ 0.9 of secured
//   scrubbed → the same secured gateway, on a server with PII scrubbing and every recognizer on → upstream
//   inspected → the same, on a server with scrubbing and the prompt-injection firewall (block, built-in detector)
// for a JSON tools/call and an SSE tools/call, and (kind `pii`) a JSON tools/call with a 1 KB argument carrying
// personal data whose result is 4 KB, in two phases:
//   throughput: CONCURRENCY keep-alive connections, closed loop  → req/s (and p50/p99 under load)
//   latency:    1 connection, one request at a time               → p50/p99 without queueing
// Ratios are computed against baselines measured in the same run, never against fixed numbers. The paths are
// measured in alternation, ROUNDS times, and each figure is the median over the rounds: on a shared 2-core
// machine the background load drifts, and alternating keeps the drift from favouring one path.
// Options (environment): BENCH_SECONDS (per measurement, default 1.5), BENCH_ROUNDS (default 3),
// BENCH_CONCURRENCY (default 16), BENCH_NGINX=0 (skip nginx, as when it is not installed),
// BENCH_JSON=path (also write the results as JSON), BENCH_USERS (users with their own token on the secured path,
// default 64), BENCH_PATHS (comma-separated paths to measure, default all).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SpawnedGateway, spawnGateway, writeGatewayConfig } from "../test/conformance/spawn-gateway.ts";
import { type ExportReceivers, startExportReceivers } from "./export-receivers.ts";
import { type LoadResult, measure, type Target } from "./load.ts";
import { describeMachine } from "./machine.ts";
import { type RunningNginx, startNginx } from "./nginx.ts";
import { cpuMs } from "./process-cpu.ts";
import { type SecuredGateway, startSecuredGateway } from "./secured-gateway.ts";
import { type RunningUpstream, spawnUpstream } from "./spawn-upstream.ts";

type Path = "direct" | "gateway" | "nginx" | "secured" | "exported" | "scrubbed" | "inspected";
const ALL_PATHS = ["direct", "gateway", "nginx", "secured", "exported", "scrubbed", "inspected"] as const;
/** BENCH_PATHS=secured,exported measures only those paths (iterating on one cost without the whole run). */
const PATHS = ALL_PATHS.filter(
  (path) => !process.env.BENCH_PATHS || process.env.BENCH_PATHS.split(",").includes(path),
);
/** Paths through a secured gateway: they need a user's token. */
const SECURED: ReadonlySet<Path> = new Set(["secured", "exported", "scrubbed", "inspected"]);
/** Paths measured on the pii workload only (the message inspectors have nothing to do on the others). */
const PII_ONLY: Readonly<Partial<Record<Path, string>>> = {
  scrubbed: "/bench-pii/mcp",
  inspected: "/bench-inspected/mcp",
};
type Kind = "json" | "sse" | "pii";
const KINDS = ["json", "sse", "pii"] as const;
type Phase = "throughput" | "latency";

/** A load result plus the CPU the proxy (gateway or nginx) and the upstream spent per request. */
interface Sample extends LoadResult {
  proxyCpuUsPerRequest: number;
  upstreamCpuUsPerRequest: number;
  /** The export receivers' process (exported path only, else NaN): CPU the same cores spend on what is exported. */
  receiversCpuUsPerRequest: number;
  /** The receivers decoding and checking what they kept, after the measurement (exported path only, else NaN). */
  receiversDecodeCpuUsPerRequest: number;
}

interface Row {
  phase: Phase;
  kind: Kind;
  path: Path;
  result: Sample;
}

const seconds = Number(process.env.BENCH_SECONDS ?? 1.5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const users = Number(process.env.BENCH_USERS ?? 64);

const body = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "echo", arguments: { text: "hello from the bench" } },
});
/** About 1 KB of a support ticket with the personal data tool arguments really carry. */
const ticket = [
  "hello from the bench: customer Jane Roe (jane.roe@example.com, +1 415 555 0132) reports that card",
  "4111 1111 1111 1111 was declined twice at the self-service kiosk. She called from 198.51.100.23 and asked",
  "for a refund to IBAN GB82 WEST 1234 5698 7654 32. Her SSN on the account form reads 536-22-8841.",
].join(" ");
const piiText =
  `${ticket} ${"The agent checked the order history and the shipping notes; nothing else was unusual. ".repeat(8)}`.slice(
    0,
    1024,
  );
const piiBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "report", arguments: { text: piiText } },
});
const headers = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

/** One request per target before measuring: a wrong answer must stop the bench, not produce a fast number. */
async function verify(path: Path, kind: Kind, target: Target): Promise<void> {
  const response = await fetch(target.url, { method: "POST", headers: target.headers, body: target.body });
  const text = await response.text();
  const contentType = response.headers.get("content-type") ?? "";
  const expectedType = kind === "sse" ? "text/event-stream" : "application/json";
  if (
    response.status !== 200 ||
    !contentType.includes(expectedType) ||
    !text.includes("hello from the bench")
  ) {
    throw new Error(
      `${path} ${kind}: unexpected answer ${response.status} ${contentType}: ${text.slice(0, 300)}`,
    );
  }
}

/**
 * Waits (up to 30 s) until the gateway at `url` has delivered its audit backlog, so the tail of a measurement's
 * exports neither runs into the next measurement nor is missing when the receivers decode what they kept.
 */
async function auditDrained(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const health = (await (await fetch(`${url}/health`)).json()) as {
      audit?: Record<string, { backlog_events?: number }>;
    };
    if (Object.values(health.audit ?? {}).every((sink) => sink.backlog_events === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

async function main(): Promise<void> {
  const machine = describeMachine();
  console.log(`svc-gateway bench — ${machine}`);
  console.log(
    `${rounds} rounds × ${seconds}s per scenario (median shown), throughput at ${concurrency} connections, latency at 1; load generator, upstream, gateway and nginx share these cores`,
  );
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-"));
  let upstream: RunningUpstream | undefined;
  let gateway: SpawnedGateway | undefined;
  let nginx: RunningNginx | undefined;
  let secured: SecuredGateway | undefined;
  let receivers: ExportReceivers | undefined;
  let exported: SecuredGateway | undefined;
  try {
    upstream = await spawnUpstream();
    const config = await writeGatewayConfig(dir, {
      "bench-json": `${upstream.url}/json/mcp`,
      "bench-sse": `${upstream.url}/sse/mcp`,
    });
    gateway = await spawnGateway(config);
    secured = await startSecuredGateway(dir, upstream.url, users);
    console.log(`secured path: JWT + RBAC + Redis rate limit + replay protection + audit, ${users} users`);
    receivers = await startExportReceivers(dir);
    exported = await startSecuredGateway(dir, upstream.url, users, {
      name: "exported",
      exportersYaml: receivers.exportersYaml,
      env: receivers.env,
    });
    console.log("exported path: the secured gateway plus the search index, OTLP logs and SIEM exporters");
    if (process.env.BENCH_NGINX === "0") console.log("BENCH_NGINX=0: skipping the nginx baseline");
    else {
      nginx = await startNginx(join(dir, "nginx"), upstream.url);
      if (nginx) console.log(`baseline: ${nginx.version}, worker_processes 1`);
      else console.log("nginx not installed: skipping the nginx baseline (apt-get install -y nginx)");
    }

    const bases: Record<Path, string | undefined> = {
      direct: upstream.url,
      gateway: gateway.url,
      nginx: nginx?.url,
      secured: secured.url,
      exported: exported.url,
      scrubbed: secured.url,
      inspected: secured.url,
    };
    const targetFor = (path: Path, kind: Kind): Target | undefined => {
      const base = bases[path];
      const piiRoute = PII_ONLY[path];
      if (!base || (piiRoute !== undefined && kind !== "pii")) return undefined;
      // The pii workload goes to the JSON upstream route; the scrubbed and inspected paths are secured-gateway servers
      // with their inspectors on.
      const upstreamKind = kind === "pii" ? "json" : kind;
      const route = path === "direct" ? `/${upstreamKind}/mcp` : (piiRoute ?? `/bench-${upstreamKind}/mcp`);
      const payload = kind === "pii" ? piiBody : body;
      if (!SECURED.has(path)) return { url: `${base}${route}`, body: payload, headers };
      const tokens = path === "exported" ? exported?.authHeaders : secured?.authHeaders;
      const headerSets = (tokens ?? []).map((auth) => ({ ...headers, ...auth }));
      return { url: `${base}${route}`, body: payload, headers: headerSets[0] ?? headers, headerSets };
    };

    const rows: Row[] = [];
    for (const kind of KINDS) {
      for (const path of PATHS) {
        const target = targetFor(path, kind);
        if (target) await verify(path, kind, target);
      }
    }
    const proxyPid: Record<Path, number | undefined> = {
      direct: undefined,
      gateway: gateway.process.pid,
      nginx: nginx?.pid,
      secured: secured.pid,
      exported: exported.pid,
      scrubbed: secured.pid,
      inspected: secured.pid,
    };
    const samples = new Map<string, Sample[]>();
    for (let round = 0; round < rounds; round++) {
      for (const phase of ["throughput", "latency"] as const) {
        for (const kind of KINDS) {
          for (const path of PATHS) {
            const target = targetFor(path, kind);
            if (!target) continue;
            let proxyCpu = 0;
            let upstreamCpu = 0;
            let receiversCpu = Number.NaN;
            const receiversPid = path === "exported" ? receivers?.pid : undefined;
            const load = await measure(target, {
              concurrency: phase === "throughput" ? concurrency : 1,
              durationMs: seconds * 1000,
              warmupMs: 300,
              onMeasureStart: () => {
                proxyCpu = cpuMs(proxyPid[path]) ?? Number.NaN;
                upstreamCpu = cpuMs(upstream?.pid) ?? Number.NaN;
                receiversCpu = cpuMs(receiversPid) ?? Number.NaN;
              },
              onMeasureEnd: () => {
                proxyCpu = (cpuMs(proxyPid[path]) ?? Number.NaN) - proxyCpu;
                upstreamCpu = (cpuMs(upstream?.pid) ?? Number.NaN) - upstreamCpu;
                receiversCpu = (cpuMs(receiversPid) ?? Number.NaN) - receiversCpu;
              },
            });
            const perRequestUs = (ms: number) => (ms * 1000) / Math.max(1, load.requests + load.errors);
            let decodeCpu = Number.NaN;
            if (path === "exported" && receivers !== undefined) {
              await auditDrained(exported.url);
              decodeCpu = (await receivers.settle()).decodeCpuMs;
            }
            const result: Sample = {
              ...load,
              proxyCpuUsPerRequest: perRequestUs(proxyCpu),
              upstreamCpuUsPerRequest: perRequestUs(upstreamCpu),
              receiversCpuUsPerRequest: perRequestUs(receiversCpu),
              receiversDecodeCpuUsPerRequest: perRequestUs(decodeCpu),
            };
            const key = `${phase}/${kind}/${path}`;
            samples.set(key, [...(samples.get(key) ?? []), result]);
          }
        }
      }
      process.stdout.write(`round ${round + 1}/${rounds} done\n`);
    }
    for (const phase of ["throughput", "latency"] as const) {
      for (const kind of KINDS) {
        for (const path of PATHS) {
          const runs = samples.get(`${phase}/${kind}/${path}`);
          if (!runs) continue;
          const result: Sample = {
            requests: runs.reduce((sum, run) => sum + run.requests, 0),
            errors: runs.reduce((sum, run) => sum + run.errors, 0),
            rps: median(runs.map((run) => run.rps)),
            p50Ms: median(runs.map((run) => run.p50Ms)),
            p99Ms: median(runs.map((run) => run.p99Ms)),
            proxyCpuUsPerRequest: median(runs.map((run) => run.proxyCpuUsPerRequest)),
            upstreamCpuUsPerRequest: median(runs.map((run) => run.upstreamCpuUsPerRequest)),
            receiversCpuUsPerRequest: median(runs.map((run) => run.receiversCpuUsPerRequest)),
            receiversDecodeCpuUsPerRequest: median(runs.map((run) => run.receiversDecodeCpuUsPerRequest)),
          };
          rows.push({ phase, kind, path, result });
          console.log(
            `${phase.padEnd(10)} ${kind.padEnd(4)} ${path.padEnd(7)} ${fmt(result.rps, 0).padStart(7)} req/s  p50 ${fmt(result.p50Ms).padStart(6)} ms  p99 ${fmt(result.p99Ms).padStart(6)} ms  CPU/req proxy ${fmt(result.proxyCpuUsPerRequest, 0).padStart(4)} µs upstream ${fmt(result.upstreamCpuUsPerRequest, 0).padStart(4)} µs  errors ${result.errors}`,
          );
        }
      }
    }

    const find = (phase: Phase, kind: Kind, path: Path) =>
      rows.find((row) => row.phase === phase && row.kind === kind && row.path === path)?.result;
    console.log(
      "\nratios (targets: gateway ≥ 0.6 × nginx req/s; gateway p50 ≤ direct p50 + 1 ms at 1 connection; secured ≥ 0.4 × nginx req/s)",
    );
    const summary: Record<string, unknown> = {};
    for (const kind of KINDS) {
      const gw = find("throughput", kind, "gateway");
      const ng = find("throughput", kind, "nginx");
      const direct = find("throughput", kind, "direct");
      const gwLatency = find("latency", kind, "gateway");
      const directLatency = find("latency", kind, "direct");
      const ngLatency = find("latency", kind, "nginx");
      const vsNginx = gw && ng ? gw.rps / ng.rps : Number.NaN;
      const vsDirect = gw && direct ? gw.rps / direct.rps : Number.NaN;
      const overhead = gwLatency && directLatency ? gwLatency.p50Ms - directLatency.p50Ms : Number.NaN;
      const nginxOverhead = ngLatency && directLatency ? ngLatency.p50Ms - directLatency.p50Ms : Number.NaN;
      // What the proxies cost in CPU per request: when the proxy is the bottleneck (its own core), its req/s
      // is inversely proportional to this, whatever else the machine is doing.
      const cpuRatio = gw && ng ? ng.proxyCpuUsPerRequest / gw.proxyCpuUsPerRequest : Number.NaN;
      summary[kind] = {
        gatewayVsNginxRps: vsNginx,
        gatewayVsDirectRps: vsDirect,
        gatewayP50OverheadMs: overhead,
        nginxP50OverheadMs: nginxOverhead,
        nginxVsGatewayCpuPerRequest: cpuRatio,
      };
      const sec = find("throughput", kind, "secured");
      const securedVsNginx = sec && ng ? sec.rps / ng.rps : Number.NaN;
      const securedVsGateway = sec && gw ? sec.rps / gw.rps : Number.NaN;
      (summary[kind] as Record<string, number>).securedVsNginxRps = securedVsNginx;
      (summary[kind] as Record<string, number>).securedVsGatewayRps = securedVsGateway;
      console.log(
        `${kind.padEnd(4)} secured/nginx req/s ${fmt(securedVsNginx)}${Number.isFinite(securedVsNginx) ? (securedVsNginx >= 0.4 ? " (meets 0.4)" : " (BELOW 0.4)") : " (no nginx)"}` +
          `  secured/gateway req/s ${fmt(securedVsGateway)}`,
      );
      console.log(
        `${kind.padEnd(4)} gateway/nginx req/s ${fmt(vsNginx)}${Number.isFinite(vsNginx) ? (vsNginx >= 0.6 ? " (meets 0.6)" : " (BELOW 0.6)") : " (no nginx)"}` +
          `  gateway/direct req/s ${fmt(vsDirect)}` +
          `  gateway p50 overhead ${fmt(overhead)} ms${overhead <= 1 ? " (meets 1 ms)" : " (ABOVE 1 ms)"}` +
          `  nginx p50 overhead ${fmt(nginxOverhead)} ms` +
          `  CPU/req nginx÷gateway ${fmt(cpuRatio)}`,
      );
    }
    // Every exporter on against the secured path in the same run: the request path only appends to the audit queue.
    for (const kind of KINDS) {
      const sec = find("throughput", kind, "secured");
      const exp = find("throughput", kind, "exported");
      const exportedVsSecured = sec && exp ? exp.rps / sec.rps : Number.NaN;
      const exportCpu = sec && exp ? exp.proxyCpuUsPerRequest - sec.proxyCpuUsPerRequest : Number.NaN;
      (summary[kind] as Record<string, number>).exportedVsSecuredRps = exportedVsSecured;
      (summary[kind] as Record<string, number>).exportCpuUsPerRequest = exportCpu;
      (summary[kind] as Record<string, number>).receiversCpuUsPerRequest =
        exp?.receiversCpuUsPerRequest ?? Number.NaN;
      (summary[kind] as Record<string, number>).receiversDecodeCpuUsPerRequest =
        exp?.receiversDecodeCpuUsPerRequest ?? Number.NaN;
      console.log(
        `${kind.padEnd(4)} exported/secured req/s ${fmt(exportedVsSecured)}${exportedVsSecured >= 0.9 ? " (meets 0.9)" : " (BELOW 0.9)"}` +
          `  gateway CPU/req secured ${fmt(sec?.proxyCpuUsPerRequest ?? Number.NaN, 0)} µs exported ${fmt(exp?.proxyCpuUsPerRequest ?? Number.NaN, 0)} µs (export adds ${fmt(exportCpu, 0)} µs)` +
          `  receivers CPU/req ${fmt(exp?.receiversCpuUsPerRequest ?? Number.NaN, 0)} µs under load (same cores), ${fmt(exp?.receiversDecodeCpuUsPerRequest ?? Number.NaN, 0)} µs decoding after`,
      );
    }
    if (PATHS.includes("exported")) {
      await auditDrained(exported.url);
      const { counts } = await receivers.settle();
      const delivery = await receivers.verify();
      const health = (await (await fetch(`${exported.url}/health`)).json()) as {
        audit?: Record<string, unknown>;
      };
      console.log(
        `exported: events received ${JSON.stringify(counts)}, distinct ${JSON.stringify(delivery.events)}; sinks at the end ${JSON.stringify(health.audit)}; checked in ${fmt(delivery.cpuMs, 0)} ms CPU`,
      );
      if (delivery.problems.length > 0) {
        throw new Error(
          `the exported path's receivers did not get every event intact:\n${delivery.problems.slice(0, 20).join("\n")}`,
        );
      }
    }
    // Scrubbing (every recognizer on) against the secured path it adds to, on the same 1 KB → 4 KB workload.
    const scrubbed = find("throughput", "pii", "scrubbed");
    const securedPii = find("throughput", "pii", "secured");
    const nginxPii = find("throughput", "pii", "nginx");
    const scrubbedLatency = find("latency", "pii", "scrubbed");
    const securedPiiLatency = find("latency", "pii", "secured");
    const scrubbedVsNginx = scrubbed && nginxPii ? scrubbed.rps / nginxPii.rps : Number.NaN;
    const addedP50 =
      scrubbedLatency && securedPiiLatency ? scrubbedLatency.p50Ms - securedPiiLatency.p50Ms : Number.NaN;
    const addedP99 =
      scrubbedLatency && securedPiiLatency ? scrubbedLatency.p99Ms - securedPiiLatency.p99Ms : Number.NaN;
    summary.pii = {
      ...(summary.pii as Record<string, number>),
      scrubbedVsNginxRps: scrubbedVsNginx,
      scrubbedVsSecuredRps: scrubbed && securedPii ? scrubbed.rps / securedPii.rps : Number.NaN,
      scrubbingAddedP50Ms: addedP50,
      scrubbingAddedP99Ms: addedP99,
      scrubbingCpuUsPerRequest:
        scrubbed && securedPii ? scrubbed.proxyCpuUsPerRequest - securedPii.proxyCpuUsPerRequest : Number.NaN,
    };
    console.log(
      `pii  scrubbed/nginx req/s ${fmt(scrubbedVsNginx)}${Number.isFinite(scrubbedVsNginx) ? (scrubbedVsNginx >= 0.5 ? " (meets 0.5)" : " (BELOW 0.5)") : " (no nginx)"}` +
        `  scrubbed/secured req/s ${fmt((summary.pii as Record<string, number>).scrubbedVsSecuredRps ?? Number.NaN)}` +
        `  added over secured at 1 connection: p50 ${fmt(addedP50)} ms${addedP50 <= 1 ? " (meets 1 ms)" : " (ABOVE 1 ms)"}, p99 ${fmt(addedP99)} ms` +
        `  gateway CPU/req added ${fmt((summary.pii as Record<string, number>).scrubbingCpuUsPerRequest ?? Number.NaN, 0)} µs`,
    );
    // Scrubbing and the firewall together against the same secured baseline.
    const inspected = find("throughput", "pii", "inspected");
    const inspectedLatency = find("latency", "pii", "inspected");
    const inspectedVsNginx = inspected && nginxPii ? inspected.rps / nginxPii.rps : Number.NaN;
    const inspectedAddedP50 =
      inspectedLatency && securedPiiLatency ? inspectedLatency.p50Ms - securedPiiLatency.p50Ms : Number.NaN;
    summary.pii = {
      ...(summary.pii as Record<string, number>),
      inspectedVsNginxRps: inspectedVsNginx,
      inspectedAddedP50Ms: inspectedAddedP50,
      firewallCpuUsPerRequest:
        inspected && scrubbed ? inspected.proxyCpuUsPerRequest - scrubbed.proxyCpuUsPerRequest : Number.NaN,
    };
    console.log(
      `pii  scrubbing+firewall/nginx req/s ${fmt(inspectedVsNginx)}${Number.isFinite(inspectedVsNginx) ? (inspectedVsNginx >= 0.5 ? " (meets 0.5)" : " (BELOW 0.5)") : " (no nginx)"}` +
        `  added over secured at 1 connection: p50 ${fmt(inspectedAddedP50)} ms${inspectedAddedP50 <= 1.5 ? " (meets 1.5 ms)" : " (ABOVE 1.5 ms)"}` +
        `  firewall CPU/req ${fmt((summary.pii as Record<string, number>).firewallCpuUsPerRequest ?? Number.NaN, 0)} µs`,
    );
    if (process.env.BENCH_JSON) {
      await writeFile(
        process.env.BENCH_JSON,
        JSON.stringify({ machine, seconds, rounds, concurrency, rows, summary }, null, 2),
      );
    }
  } finally {
    await nginx?.stop();
    await gateway?.stop();
    await secured?.stop();
    await exported?.stop();
    await receivers?.close();
    await upstream?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
