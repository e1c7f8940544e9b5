// A closed-loop load generator: `concurrency` workers, each on its own keep-alive connection (undici Pool),
// sending the next request as soon as the previous response has been read to the end, for a fixed time.
import { Pool } from "undici";

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LoadOptions {
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  /** Called when measuring starts (after warm-up) and when it ends, e.g. to read CPU counters. */
  onMeasureStart?: () => void;
  onMeasureEnd?: () => void;
}

export interface Target {
  /** Full URL of the MCP endpoint, e.g. http://127.0.0.1:1234/bench-json/mcp */
  url: string;
  body: string;
  headers: Record<string, string>;
  /** When set, requests cycle through these header sets (e.g. one bearer token per simulated user). */
  headerSets?: Record<string, string>[];
  /** When set, the body of the n-th request (a proxy that keeps one session needs a distinct JSON-RPC id each). */
  bodyFor?: (n: number) => string;
}

export async function measure(target: Target, options: LoadOptions): Promise<LoadResult> {
  const url = new URL(target.url);
  const pool = new Pool(url.origin, { connections: options.concurrency, pipelining: 1 });
  let next = 0;
  let sequence = 0;
  const sets = target.headerSets;
  const bodyFor = target.bodyFor;
  const path = `${url.pathname}${url.search}`;
  const send = async (): Promise<boolean> => {
    const response = await pool.request({
      path,
      method: "POST",
      headers: sets === undefined ? target.headers : (sets[next++ % sets.length] ?? target.headers),
      body: bodyFor === undefined ? target.body : bodyFor(sequence++),
    });
    // Read to the end: for SSE the response is only complete when the stream ends.
    await response.body.text();
    return response.statusCode === 200;
  };
  try {
    await runFor(options.warmupMs, options.concurrency, send, () => {});
    const latencies: number[] = [];
    let errors = 0;
    options.onMeasureStart?.();
    const started = performance.now();
    await runFor(options.durationMs, options.concurrency, send, (ok, ms) => {
      if (ok) latencies.push(ms);
      else errors += 1;
    });
    options.onMeasureEnd?.();
    const elapsedS = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      requests: latencies.length,
      errors,
      rps: latencies.length / elapsedS,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
    };
  } finally {
    await pool.close();
  }
}

async function runFor(
  durationMs: number,
  concurrency: number,
  send: () => Promise<boolean>,
  record: (ok: boolean, ms: number) => void,
): Promise<void> {
  const deadline = performance.now() + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const start = performance.now();
      let ok = false;
      try {
        ok = await send();
      } catch {
        ok = false;
      }
      record(ok, performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}
