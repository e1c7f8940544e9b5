// Evaluates the SHIPPED built-in classifier through loadBuiltinDetector() (the code the gateway runs)
// on the dev split of scripts/firewall-dataset.ts: precision, recall, F1 and false-positive rate per
// subset and overall, for requests (direct prompts) and tool outputs; latency per KB (p50/p99); and the
// held-out-source figures recorded by the training run (a model that never saw those subsets).
// Run: `npm run eval:firewall`.

import { loadBuiltinDetector, loadBuiltinModel } from "../src/firewall/builtin-detector.ts";
import type { Detection } from "../src/firewall/detector.ts";
import { loadInjectionData, splitBySubset } from "./firewall-dataset.ts";
import { type Counts, countsBySubset, formatCountsTable, type ScoredText } from "./firewall-metrics.ts";
import { REPORT_AGGREGATES } from "./firewall-report.ts";

const LATENCY_ROUNDS = 5;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? 0;
}

function main(): void {
  const detector = loadBuiltinDetector();
  const { dev } = splitBySubset(loadInjectionData());
  const scored: ScoredText[] = dev.map((row) => ({
    row,
    score: (detector.score(row.text, row.direction) as Detection).score,
  }));
  for (const direction of ["request", "response"] as const) {
    const title = `Dev split: ${direction === "request" ? "requests (direct prompts)" : "tool outputs (indirect)"}, score >= 0.5`;
    const counts = countsBySubset(
      scored.filter(({ row }) => row.direction === direction),
      0.5,
    );
    console.log(`${formatCountsTable(title, counts, REPORT_AGGREGATES[direction])}\n`);
  }

  const training = loadBuiltinModel().training as
    | { heldOutSubsets?: Record<string, [string, Counts][]> }
    | undefined;
  for (const direction of ["request", "response"] as const) {
    const heldOut = training?.heldOutSubsets?.[direction];
    if (heldOut === undefined) continue;
    const title = `Held-out subsets (${direction}): recorded by the training run from a model trained without them, score >= 0.5`;
    console.log(`${formatCountsTable(title, heldOut, REPORT_AGGREGATES[direction])}\n`);
  }

  // Latency: every dev text scored LATENCY_ROUNDS times after a warm-up pass; microseconds per KB of text.
  const perKb: number[] = [];
  for (let round = 0; round <= LATENCY_ROUNDS; round++) {
    for (const row of dev) {
      const started = process.hrtime.bigint();
      detector.score(row.text, row.direction);
      const micros = Number(process.hrtime.bigint() - started) / 1000;
      if (round > 0) perKb.push(micros / Math.max(0.1, row.text.length / 1024));
    }
  }
  perKb.sort((a, b) => a - b);
  console.log(
    `Latency (${perKb.length} scorings of dev texts): p50 ${percentile(perKb, 0.5).toFixed(1)} µs/KB, p99 ${percentile(perKb, 0.99).toFixed(1)} µs/KB`,
  );
}

main();
