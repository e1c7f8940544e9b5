// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by module, the largest first, as
// percentages of the busy (neither idle nor socket-write) sampled time, and who calls the costliest native functions. Only the last
// `lastSeconds` of the profile count when given (the load window, without the process's start-up).
// Usage: node cpu-profile-summary.ts <file.cpuprofile> [top N, default 25] [last seconds]
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A short module name: the npm package, the gateway source path, or Node's own `node:` module. */
export function moduleOf(url: string): string {
  if (url === "") return "(native / V8)";
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch?.[1]) return packageMatch[1];
  const source = /\/gateway\/(src\/.+)$/.exec(url);
  if (source?.[1]) return source[1];
  return url.replace(/^file:\/\//, "");
}

const frameName = (frame: ProfileNode["callFrame"]) =>
  `${frame.functionName || "(anonymous)"} ${moduleOf(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;

export function summarise(profile: CpuProfile, top: number, lastSeconds?: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const from = lastSeconds === undefined ? Number.NEGATIVE_INFINITY : profile.endTime - lastSeconds * 1e6;
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at >= from) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  let total = 0;
  let idle = 0;
  let socketWrites = 0;
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  // Native functions (no script URL) by their JavaScript caller: which code pays for the syscall.
  const nativeCallers = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    if (frame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    // The sampler records wall time: a thread preempted inside a socket write (the write wakes the peer) keeps
    // being sampled there, so on a loaded machine writev's share says more about the machine than the code.
    if (frame.url === "" && frame.functionName === "writev") {
      socketWrites += us;
      continue;
    }
    total += us;
    if (
      frame.url === "" &&
      frame.functionName !== "(garbage collector)" &&
      frame.functionName !== "(program)"
    ) {
      let caller = parentOf.get(id);
      const path: string[] = [];
      while (caller !== undefined && path.length < 3) {
        const callerFrame = byId.get(caller)?.callFrame;
        if (callerFrame?.url) path.push(frameName(callerFrame));
        caller = parentOf.get(caller);
      }
      const key = `${frame.functionName} ← ${path.join(" ← ")}`;
      nativeCallers.set(key, (nativeCallers.get(key) ?? 0) + us);
    }
    const name = frameName(frame);
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const module = moduleOf(frame.url);
    byModule.set(module, (byModule.get(module) ?? 0) + us);
  }
  // Inclusive time (self plus callees) of the gateway's own functions and the libraries' entry points: what each
  // stage of the request path costs with everything it calls.
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)?.callFrame.functionName === "(idle)") continue;
    const counted = new Set<string>();
    if (byId.get(id)?.callFrame.functionName === "writev") continue;
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame?.url) continue;
      const module = moduleOf(frame.url);
      if (!module.startsWith("src/") && !["hono", "@hono/node-server", "undici"].includes(module)) continue;
      const name = frameName(frame);
      if (counted.has(name)) continue;
      counted.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const table = (title: string, entries: Map<string, number>) =>
    [
      title,
      ...[...entries]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([name, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${name}`),
    ].join("\n");
  return [
    `busy ${(total / 1000).toFixed(0)} ms (percentages are of this), socket writev ${(socketWrites / 1000).toFixed(0)} ms (left out: wall time in the syscall; /proc's system time is the real figure), idle ${(idle / 1000).toFixed(0)} ms`,
    table("self time by module:", byModule),
    table("self time by function:", byFunction),
    table("native self time by caller:", nativeCallers),
    table("inclusive time of gateway functions and library entry points:", inclusive),
  ].join("\n\n");
}

/**
 * The summary of the gateway's profile in `dir`, where a profiling script ran it with --cpu-prof: the largest
 * .cpuprofile there (the gateway is the process that served the load), its last `lastSeconds` (the load window, not
 * the start-up's module loading). Starts with the profile's path, kept for a flame graph.
 */
export async function summariseGatewayProfile(
  dir: string,
  top: number,
  lastSeconds: number,
): Promise<string> {
  const profiles = (await readdir(dir)).filter((name) => name.endsWith(".cpuprofile"));
  const sized = await Promise.all(
    profiles.map(async (name) => ({ name, text: await readFile(join(dir, name), "utf8") })),
  );
  const largest = sized.sort((a, b) => b.text.length - a.text.length)[0];
  if (!largest) throw new Error(`no .cpuprofile written in ${dir}`);
  return `profile: ${join(dir, largest.name)}\n\n${summarise(JSON.parse(largest.text) as CpuProfile, top, lastSeconds)}`;
}

if (import.meta.main) {
  const [file, top, last] = process.argv.slice(2);
  if (!file) throw new Error("usage: cpu-profile-summary.ts <file.cpuprofile> [top N]");
  console.log(
    summarise(
      JSON.parse(readFileSync(file, "utf8")) as CpuProfile,
      Number(top ?? 25),
      last === undefined ? undefined : Number(last),
    ),
  );
}
