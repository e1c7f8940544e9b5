import { existsSync, readFileSync } from "node:fs";

/** CPU time (user + system, µs) a process has used, from /proc; undefined where /proc is missing. */
export function processCpuMicros(pid: number | undefined): number | undefined {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return undefined;
  // Fields after the command name: state is 3rd, utime 14th, stime 15th (1-based) → indexes 11 and 12 here.
  const fields = (readFileSync(file, "utf8").split(") ")[1] ?? "").split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1_000_000) / 100; // USER_HZ is 100 on Linux
}
