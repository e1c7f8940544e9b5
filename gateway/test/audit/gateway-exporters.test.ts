// The delivery core wired into a real gateway: enabled exporters become audit sinks with their own spools under
// SVC_AUDIT_SPOOL_DIR, /health and /metrics name them, and a reload that removes one exporter and adds another keeps
// what is queued for the one that stays (the exporters here are this branch's placeholders, which never accept, so
// everything they get stays spooled: exactly what an exporter whose receiver is down looks like).
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, test, vi } from "vitest";
import { connectClient, startGatewayWithConfig } from "../proxy/support/gateway.ts";
import { startUpstream, type Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { waitFor } from "./support/test-sink.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
let upstream: Upstream;
let spool: string;

beforeAll(async () => {
  upstream = await startUpstream();
  cleanup(() => upstream.close());
  spool = await mkdtemp(join(tmpdir(), "svc-gw-spool-"));
  cleanup(() => rm(spool, { recursive: true, force: true }));
});

const SEARCH_INDEX = `  search_index:
    - name: es
      url: http://127.0.0.1:9
`;
const OTEL = `  otel:
    - name: collector
      endpoint: http://127.0.0.1:9
      protocol: http/json
`;
const SIEM = `  siem:
    - name: sentinel
      dcr_immutable_id: dcr-1
      dcr_endpoint: https://127.0.0.1:9
      tenant_id: t
      client_id: c
      client_secret: s3cr3t-value
`;

type AuditHealth = Record<string, { state: string; backlog_events: number; backlog_bytes: number }>;

async function auditHealth(url: string): Promise<{ status: string; audit: AuditHealth }> {
  return (await (await fetch(`${url}/health`)).json()) as { status: string; audit: AuditHealth };
}

async function spooledLines(sinkDir: string): Promise<number> {
  let lines = 0;
  for (const name of await readdir(sinkDir)) {
    if (/^\d+\.jsonl$/.test(name))
      lines += (await readFile(join(sinkDir, name), "utf8")).split("\n").length - 1;
  }
  return lines;
}

test("exporters get their own spooled queues; a reload removes one and adds another without loss", async () => {
  const config = (exporters: string) => `version: "1.0"
servers:
  - name: up
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
exporters:
${exporters}`;
  // Exports held back under the test's traffic for at most 1 s (the default 10 s would race the 10 s waits below), and
  // at the gateway's priority: on a busy machine an idle-only export process would not run within them.
  const gateway = await startGatewayWithConfig(config(SEARCH_INDEX + OTEL), {
    SVC_AUDIT_SPOOL_DIR: spool,
    SVC_AUDIT_EXPORT_DEFER_SECONDS: "1",
    SVC_AUDIT_EXPORT_NICENESS: "0",
  });
  let closed = false;
  cleanup(async () => {
    if (!closed) await gateway.close();
  });
  expect(Object.keys((await auditHealth(gateway.url)).audit).sort()).toEqual([
    "file",
    "otel:collector",
    "search_index:es",
  ]);

  const { client } = await connectClient(`${gateway.url}/up/mcp`);
  for (let i = 0; i < 3; i++) await client.callTool({ name: "echo", arguments: { text: `call ${i}` } });
  await client.close();
  const before = await waitFor(async () => {
    const health = await auditHealth(gateway.url);
    expect(health.audit["search_index:es"]?.backlog_events).toBeGreaterThanOrEqual(3);
    expect(health.audit["otel:collector"]?.backlog_events).toBeGreaterThanOrEqual(3);
    // After the linger time (1 s) the first attempt fails: retrying.
    expect(health.audit["search_index:es"]?.state).toBe("retrying");
    return health;
  });
  expect(before.status).toBe("degraded");
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  expect(metrics).toMatch(/svc_gateway_audit_spooled_events\{sink="search_index:es"\} [1-9]/);
  expect(metrics).toMatch(/svc_gateway_audit_events_exported_total\{sink="file"\} [1-9]/);

  await writeFile(gateway.configPath, config(SEARCH_INDEX + SIEM));
  expect(await gateway.gateway.reload()).toBe(true);
  const after = await auditHealth(gateway.url);
  expect(Object.keys(after.audit).sort()).toEqual(["file", "search_index:es", "siem:sentinel"]);
  expect(after.audit["search_index:es"]?.backlog_events).toBeGreaterThanOrEqual(
    before.audit["search_index:es"]?.backlog_events ?? 0,
  );
  expect(JSON.stringify(after)).not.toContain("s3cr3t-value");

  await gateway.close();
  closed = true;
  // Undelivered events stay on disk for the next start: the removed exporter's too.
  expect(await spooledLines(join(spool, "search_index%3Aes"))).toBeGreaterThanOrEqual(3);
  expect(await spooledLines(join(spool, "otel%3Acollector"))).toBeGreaterThanOrEqual(3);
});
