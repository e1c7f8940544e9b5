// The "exported" bench path's receivers: the three loopback receivers the fault tests use (search index bulk API,
// OTLP logs over http/protobuf, the Azure logs ingestion API with its token endpoint), started by the bench in a
// process of their own (export-receivers-child.ts) so the secured gateway can run with every exporter on. What they
// received is decoded between measurements and verified after the run (every event, wire format, intact chains), so a
// fast number cannot come from an export that silently did nothing.
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { readdirSync } from "node:fs";
import { setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import type { DeliveryReport, ReceiversReply, ReceiversRequest } from "./export-receivers-child.ts";

export type { DeliveryReport } from "./export-receivers-child.ts";

export interface ExportReceivers {
  /** The `exporters:` section that points a gateway at the receivers. */
  exportersYaml: string;
  /** What a spawned gateway needs to reach the SIEM receiver (its authority host and its self-signed CA). */
  env: Record<string, string>;
  /** The receivers' process, for its CPU time: on this machine it competes with the gateway. */
  pid: number | undefined;
  /**
   * Decodes and checks what the receivers kept while load ran (they only keep bodies then, as a remote service costs
   * this machine nothing); returns the events each got so far, by exporter name, and the CPU the decoding took.
   */
  settle(): Promise<{ counts: Record<string, number>; decodeCpuMs: number }>;
  /** After settle(): did every receiver get every event, in complete and intact chains? */
  verify(): Promise<DeliveryReport>;
  close(): Promise<void>;
}

const CHILD = fileURLToPath(new URL("./export-receivers-child.ts", import.meta.url));
/** How long the child may take to start its receivers, answer, or close. */
const CHILD_TIMEOUT_MS = 30_000;

/** The child's next reply of `type`; rejects when it exits first or takes longer than CHILD_TIMEOUT_MS. */
function nextReply<T extends ReceiversReply["type"]>(
  child: ChildProcess,
  type: T,
): Promise<Extract<ReceiversReply, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new Error(`the export receivers process did not answer '${type}' within ${CHILD_TIMEOUT_MS} ms`),
      );
    }, CHILD_TIMEOUT_MS);
    const onMessage = (message: ReceiversReply) => {
      if (message.type !== type) return;
      cleanup();
      resolve(message as Extract<ReceiversReply, { type: T }>);
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`the export receivers process exited (code ${code}) before answering '${type}'`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
  });
}

/**
 * The receivers stand in for remote services, which cost the gateway's machine nothing: at the lowest priority they
 * take only CPU the measured processes leave idle (their CPU is still reported). On Linux a niceness is per thread,
 * so every thread the process has started gets it; and SCHED_IDLE where util-linux's `chrt` is there (as the
 * gateway's export process does), so that a measured process waking up takes the core at once.
 */
function lowestPriority(pid: number | undefined): void {
  if (pid === undefined) return;
  let threads: number[] = [pid];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {}
  for (const thread of threads) setPriority(thread, 19);
  try {
    execFileSync("chrt", ["--idle", "--all-tasks", "--pid", "0", String(pid)], { stdio: "ignore" });
  } catch {}
}

export async function startExportReceivers(dir: string): Promise<ExportReceivers> {
  const child = fork(CHILD, [dir], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const send = (request: ReceiversRequest) => child.send(request);
  let ready: Extract<ReceiversReply, { type: "ready" }>;
  try {
    ready = await nextReply(child, "ready");
    lowestPriority(child.pid);
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    exportersYaml: ready.exportersYaml,
    env: ready.env,
    pid: child.pid,
    settle: async () => {
      const answer = nextReply(child, "settled");
      send({ type: "settle" });
      const { counts, decodeCpuMs } = await answer;
      return { counts, decodeCpuMs };
    },
    verify: async () => {
      const answer = nextReply(child, "verified");
      send({ type: "verify" });
      return (await answer).report;
    },
    close: async () => {
      if (child.exitCode !== null || !child.connected) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      send({ type: "close" });
      await exited;
    },
  };
}
