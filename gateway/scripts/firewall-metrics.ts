// Confusion counts and the plain-text report table shared by train-firewall.ts and eval-firewall.ts.

import type { LabelledText } from "./firewall-dataset.ts";

export interface Counts {
  tp: number;
  fp: number;
  tn: number;
  fn: number;
}

export interface ScoredText {
  readonly row: LabelledText;
  readonly score: number;
}

export function emptyCounts(): Counts {
  return { tp: 0, fp: 0, tn: 0, fn: 0 };
}

export function addCounts(into: Counts, from: Counts): Counts {
  into.tp += from.tp;
  into.fp += from.fp;
  into.tn += from.tn;
  into.fn += from.fn;
  return into;
}

export function countOne(counts: Counts, label: 0 | 1, flagged: boolean): void {
  if (label === 1) {
    if (flagged) counts.tp++;
    else counts.fn++;
  } else if (flagged) counts.fp++;
  else counts.tn++;
}

/** Counts per subset at `threshold` (score >= threshold flags the text), subsets sorted by name. */
export function countsBySubset(scored: readonly ScoredText[], threshold: number): [string, Counts][] {
  const bySubset = new Map<string, Counts>();
  for (const { row, score } of scored) {
    const counts = bySubset.get(row.subset) ?? emptyCounts();
    countOne(counts, row.label, score >= threshold);
    bySubset.set(row.subset, counts);
  }
  return [...bySubset.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** Clean tool outputs: the negatives the indirect false-positive target is measured on. */
export function isCleanToolOutput(subset: string): boolean {
  return subset.includes("clean") || subset === "injecagent-benign-filled";
}

function ratio(numerator: number, denominator: number): string {
  return denominator === 0 ? "-" : (numerator / denominator).toFixed(3);
}

export function f1(counts: Counts): number {
  const denominator = 2 * counts.tp + counts.fp + counts.fn;
  return denominator === 0 ? 0 : (2 * counts.tp) / denominator;
}

/** One row per subset plus the given aggregate rows, as an aligned text table. */
export function formatCountsTable(
  title: string,
  bySubset: readonly [string, Counts][],
  aggregates: readonly { name: string; includes: (subset: string) => boolean }[],
): string {
  const header = ["subset", "rows", "inj", "TP", "FP", "FN", "precision", "recall", "F1", "FPR"];
  const line = (name: string, c: Counts): string[] => [
    name,
    String(c.tp + c.fp + c.tn + c.fn),
    String(c.tp + c.fn),
    String(c.tp),
    String(c.fp),
    String(c.fn),
    ratio(c.tp, c.tp + c.fp),
    ratio(c.tp, c.tp + c.fn),
    c.tp + c.fn === 0 ? "-" : f1(c).toFixed(3),
    ratio(c.fp, c.fp + c.tn),
  ];
  const rows = bySubset.map(([subset, counts]) => line(subset, counts));
  const aggregateRows = aggregates.map(({ name, includes }) => {
    const total = emptyCounts();
    for (const [subset, counts] of bySubset) if (includes(subset)) addCounts(total, counts);
    return line(name, total);
  });
  const all = [header, ...rows, ...aggregateRows];
  const widths = header.map((_, column) => Math.max(...all.map((cells) => (cells[column] ?? "").length)));
  const render = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join("  ");
  const rule = "-".repeat(widths.reduce((sum, width) => sum + width + 2, -2));
  return [title, render(header), rule, ...rows.map(render), rule, ...aggregateRows.map(render)].join("\n");
}
