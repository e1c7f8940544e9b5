// Resident memory of a process (and its direct children, e.g. nginx's worker) from /proc, and the gateway's own
// split of it (V8 heap, external memory) from its /metrics gauges. Linux only; elsewhere it reports nothing.
import { readFileSync } from "node:fs";
import { childPids } from "./process-cpu.ts";

function statusKb(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? Number.NaN);
}

/** Resident set in MB of pid and its direct children; undefined when /proc is not there. */
export function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return [pid, ...childPids(pid)].reduce((sum, each) => sum + statusKb(each, "VmRSS"), 0) / 1024;
  } catch {
    return undefined;
  }
}

/** The file-backed part of the resident set (the mapped binary and shared libraries: code), in MB. */
export function rssFileMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return statusKb(pid, "RssFile") / 1024;
  } catch {
    return undefined;
  }
}

export interface GatewayMemory {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  /** File-backed resident memory: the node binary and libraries mapped in (code). */
  codeMb: number;
}

/** The gateway's memory split, from its /metrics gauges plus /proc for the code part. */
export async function gatewayMemory(url: string, pid: number | undefined): Promise<GatewayMemory> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauge = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN) / 1024 / 1024;
  return {
    rssMb: rssMb(pid) ?? gauge("process_resident_memory_bytes"),
    heapUsedMb: gauge("nodejs_heap_size_used_bytes"),
    heapTotalMb: gauge("nodejs_heap_size_total_bytes"),
    externalMb: gauge("nodejs_external_memory_bytes"),
    codeMb: rssFileMb(pid) ?? Number.NaN,
  };
}
