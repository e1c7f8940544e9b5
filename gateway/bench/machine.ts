// What the numbers were measured on, printed with every run.
import { readFileSync } from "node:fs";
import { availableParallelism, loadavg, totalmem } from "node:os";

export function describeMachine(): string {
  let cpu = "unknown CPU";
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux
  }
  const memGiB = (totalmem() / 1024 ** 3).toFixed(1);
  // The load average says how much else was running: on a shared machine it explains noisy figures.
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
  return `${availableParallelism()} cores (nproc), ${cpu}, ${memGiB} GiB RAM, Node ${process.versions.node}, ${process.platform}/${process.arch}, load average ${load}`;
}
