// CPU time a process (and its children, e.g. nginx's worker) has used, from /proc. On a shared machine
// req/s drifts with whatever else runs, but CPU time per request barely does: it is the steadier measure
// of what a proxy costs. Linux only; elsewhere it reports nothing.
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ; 100 on every Linux architecture Node supports

/** The direct children of pid (nginx's worker under its master). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

function ownCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the ")" that ends the command name: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** CPU milliseconds used so far by pid and its direct children; undefined when /proc is not there. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return [pid, ...childPids(pid)].reduce((sum, each) => sum + ownCpuMs(each), 0);
  } catch {
    return undefined;
  }
}
