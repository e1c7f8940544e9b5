// `svc-gateway start` as a real process whose search-index exporter points at a closed port: traffic is audited into
// the exporter's spool, the process is killed with SIGKILL, and every event it spooled comes back out of the spool,
// in chain order, counted by (instance, seq). The replay uses the audit log in-process with a plain sink of the same
// name: this checks the spool the gateway left behind, whichever exporter module wrote to it.
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test, vi } from "vitest";
import { AuditLog } from "../../src/audit/audit-log.ts";
import { spawnGateway } from "../conformance/spawn-gateway.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { range, seqs, TestSink, waitFor } from "./support/test-sink.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let child: ChildProcess | undefined;
let upstream: Upstream | undefined;
let dir: string | undefined;
afterAll(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await upstream?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** A port nothing listens on: bound, read, released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function spooledEvents(sinkDir: string): Promise<number> {
  let lines = 0;
  for (const name of await readdir(sinkDir).catch(() => [])) {
    if (/^\d+\.jsonl$/.test(name))
      lines += (await readFile(join(sinkDir, name), "utf8")).split("\n").length - 1;
  }
  return lines;
}

test("SIGKILL while the exporter's receiver is down: every spooled event is replayed after the restart", async () => {
  upstream = await startUpstream();
  dir = await mkdtemp(join(tmpdir(), "svc-gw-kill-"));
  const spool = join(dir, "spool");
  const configPath = join(dir, "config.yaml");
  await writeFile(
    configPath,
    `version: "1.0"
servers:
  - name: up
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
exporters:
  search_index:
    - name: es
      url: http://127.0.0.1:${await closedPort()}
      timeout: 5
`,
  );
  const logFile = join(dir, "gateway.log");
  const gateway = await spawnGateway(configPath, {
    logFile,
    env: {
      LOG_LEVEL: "info",
      SVC_CONFIG_POLL_SECONDS: "0",
      SVC_AUDIT_FILE: join(dir, "audit.jsonl"),
      SVC_AUDIT_SPOOL_DIR: spool,
      // Exports held back under the test's traffic for at most 1 s (the default 10 s would race the waits below), and
      // at the gateway's priority: on a busy machine an idle-only export process would not run within them.
      SVC_AUDIT_EXPORT_DEFER_SECONDS: "1",
      SVC_AUDIT_EXPORT_NICENESS: "0",
    },
  });
  child = gateway.process;
  const listening = (await readFile(logFile, "utf8"))
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { msg?: string; exporters?: string[] })
    .find((line) => line.msg === "listening");
  expect(listening?.exporters).toEqual(["search_index:es"]);
  const exited = once(child, "exit");
  const url = gateway.url;
  const { client } = await connectClient(`${url}/up/mcp`);
  const calls = 20;
  for (let i = 0; i < calls; i++) await client.callTool({ name: "echo", arguments: { text: `call ${i}` } });
  const sinkDir = join(spool, "search_index%3Aes");
  await waitFor(async () => expect(await spooledEvents(sinkDir)).toBeGreaterThanOrEqual(calls), {
    timeout: 30_000,
    interval: 50,
  });
  child.kill("SIGKILL");
  await exited;
  await client.close().catch(() => {});
  const onDisk = await spooledEvents(sinkDir);

  const receiver = new TestSink("search_index:es");
  const log = new AuditLog({
    gateway: "replay",
    sinks: [receiver],
    spool: { dir: spool, maxBytes: 1 << 30 },
  });
  await log.drain();
  await log.close(0);
  const instances = new Set(receiver.received.map((event) => event.instance));
  expect(instances.size).toBe(1);
  expect(seqs(receiver.received)).toEqual(range(0, onDisk));
  expect(receiver.received.filter((event) => event.kind === "call_completed").length).toBeGreaterThanOrEqual(
    calls,
  );
});
