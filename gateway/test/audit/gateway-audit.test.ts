// Step 9 through a real gateway writing to SVC_AUDIT_FILE: authentication failures, RBAC decisions and completed
// calls land in the file as one hash chain, `svc-gateway audit verify FILE` accepts it, and rejects it once edited.
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, test, vi } from "vitest";
import {
  AUDIENCE,
  connectWithGroups,
  identityProvidersYaml,
  startIdentityProviderAndUpstream,
} from "../identity/support/gateway-identity.ts";
import type { TestIdentityProvider } from "../identity/support/test-identity-provider.ts";
import { startGatewayWithConfig } from "../proxy/support/gateway.ts";
import type { Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const BIN = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;
const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let upstream: Upstream;
let dir: string;

beforeAll(async () => {
  ({ idp, upstream } = await startIdentityProviderAndUpstream(cleanup));
  dir = await mkdtemp(join(tmpdir(), "svc-gw-audit-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
});

async function verify(file: string): Promise<number> {
  try {
    await promisify(execFile)(process.execPath, [BIN, "audit", "verify", file]);
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

test("a gateway's audit file holds its decisions as one chain that `audit verify` accepts, and rejects once edited", async () => {
  const file = join(dir, "audit.jsonl");
  const gateway = await startGatewayWithConfig(
    `version: "1.0"
${identityProvidersYaml(idp)}servers:
  - name: up
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
    rbac_enabled: true
    allowed_groups: [staff]
`,
    { SVC_AUDIT_FILE: file },
  );
  let closed = false;
  cleanup(async () => {
    if (!closed) await gateway.close();
  });

  const { client, token } = await connectWithGroups(idp, `${gateway.url}/up/mcp`, ["staff"]);
  await client.callTool({ name: "echo", arguments: { text: "on the record" } });
  await client.close();
  const anonymous = await fetch(`${gateway.url}/up/mcp`, { method: "POST", body: "{}" });
  expect(anonymous.status).toBe(401);
  const outsider = await idp.token({ resource: AUDIENCE, claims: { groups: ["visitors"] } });
  const refused = await fetch(`${gateway.url}/up/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${outsider}` },
    body: "{}",
  });
  expect(refused.status).toBe(403);
  await gateway.close(); // drains the audit queue into the file
  closed = true;

  const lines = (await readFile(file, "utf8")).trim().split("\n");
  const events = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const kinds = new Set(events.map((event) => event.kind));
  expect(kinds).toEqual(new Set(["rbac_decision", "call_completed", "authentication_failed"]));
  expect(events).toContainEqual(
    expect.objectContaining({
      kind: "call_completed",
      method: "tools/call",
      capability: "tools/echo",
      status: 200,
    }),
  );
  expect(events).toContainEqual(
    expect.objectContaining({
      kind: "authentication_failed",
      reason: "missing",
      status: 401,
      decision: "deny",
    }),
  );
  expect(events).toContainEqual(
    expect.objectContaining({ kind: "rbac_decision", decision: "deny", groups: ["visitors"], server: "up" }),
  );
  // No token ever reaches the audit trail.
  expect(lines.join("\n")).not.toContain(token);
  expect(await verify(file)).toBe(0);

  const tampered = join(dir, "tampered.jsonl");
  const edited = events.map((event, i) =>
    JSON.stringify(i === 1 ? { ...event, subject: "someone-else" } : event),
  );
  await writeFile(tampered, `${edited.join("\n")}\n`);
  expect(await verify(tampered)).toBe(1);
});
