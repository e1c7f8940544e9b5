// Two identity providers (two real oidc-provider instances) in front of one gateway with three servers: one bound
// to provider a (`idp: a`), one to b, one without `idp`. A server with `idp` admits only its provider's tokens; a
// token issued in the future is refused; the metadata routes have /mcp's Host/Origin guard; and a flood of junk
// tokens leaves a bounded, aggregated audit trail whose counts add up and whose chain verifies.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { request } from "undici";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import type { Upstream } from "../proxy/support/upstream.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import {
  AUDIENCE,
  identityProviderEntryYaml,
  startIdentityProviderAndUpstream,
} from "./support/gateway-identity.ts";
import { startTestIdentityProvider, type TestIdentityProvider } from "./support/test-identity-provider.ts";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const BIN = new URL("../../bin/svc-gateway.js", import.meta.url).pathname;
const cleanup = cleanupsAfterAll();
let idpA: TestIdentityProvider;
let idpB: TestIdentityProvider;
let upstream: Upstream;
let dir: string;
let gateway: TestGateway;
let auditFile: string;

type AuditRecord = Record<string, unknown>;

function configYaml(): string {
  const server = (name: string, extra: string[] = []) =>
    [
      `  - name: ${name}`,
      `    url: ${JSON.stringify(upstream.url)}`,
      "    upstream_auth_type: none",
      ...extra.map((line) => `    ${line}`),
    ].join("\n");
  return [
    'version: "1.0"',
    "identity_providers:",
    identityProviderEntryYaml(idpA, { name: "a" }) + identityProviderEntryYaml(idpB, { name: "b" }),
    "servers:",
    // Both providers issue tokens with group "staff": on only-a, only provider a's staff may come in.
    server("only-a", ["idp: a", "rbac_enabled: true", "allowed_groups: [staff]"]),
    server("only-b", ["idp: b"]),
    server("any"),
    "",
  ].join("\n");
}

async function startGateway(file: string, env: Record<string, string> = {}): Promise<TestGateway> {
  const started = await startGatewayWithConfig(configYaml(), { SVC_AUDIT_FILE: file, ...env });
  let closed = false;
  cleanup(async () => {
    if (!closed) await started.close();
  });
  return {
    ...started,
    close: async () => {
      closed = true;
      await started.close();
    },
  };
}

beforeAll(async () => {
  ({ idp: idpA, upstream } = await startIdentityProviderAndUpstream(cleanup));
  idpB = await startTestIdentityProvider();
  cleanup(() => idpB.close());
  dir = await mkdtemp(join(tmpdir(), "svc-gw-two-idps-"));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  auditFile = join(dir, "audit.jsonl");
  gateway = await startGateway(auditFile);
});

/** The events written so far (a line still being written is left for the next read). */
async function auditEvents(file: string): Promise<AuditRecord[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  return complete
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as AuditRecord);
}

/** Waits for an audit event matching `expected` to reach the file (no fixed sleep: polled with a deadline). */
async function auditEventLike(expected: AuditRecord): Promise<AuditRecord> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = (await auditEvents(auditFile)).find((event) =>
      Object.entries(expected).every(([key, value]) => event[key] === value),
    );
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no audit event like ${JSON.stringify(expected)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const initialize = (server: string, token: string, base = gateway.url) =>
  postJsonRpc(`${base}/${server}/mcp`, initializeRequest(), { authorization: `Bearer ${token}` });

describe("a server's idp binds it to that provider", () => {
  test("tokens cross-checked: only-a takes a's, only-b b's, a server without idp both", async () => {
    const tokenA = await idpA.token({ resource: AUDIENCE, claims: { groups: ["staff"] } });
    const tokenB = await idpB.token({ resource: AUDIENCE, claims: { groups: ["staff"] } });
    expect((await initialize("only-a", tokenA)).status).toBe(200);
    expect((await initialize("only-b", tokenB)).status).toBe(200);
    expect((await initialize("any", tokenA)).status).toBe(200);
    expect((await initialize("any", tokenB)).status).toBe(200);

    for (const [server, token, own] of [
      ["only-a", tokenB, idpA],
      ["only-b", tokenA, idpB],
    ] as const) {
      const refused = await initialize(server, token);
      expect(refused.status).toBe(401);
      const metadataUrl = `${gateway.url}/.well-known/oauth-protected-resource/${server}/mcp`;
      const challenge = refused.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain('error="invalid_token"');
      expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      // The metadata the challenge names tells the client which provider to get a token from: only the server's.
      const metadata = (await (await fetch(metadataUrl)).json()) as { authorization_servers: string[] };
      expect(metadata.authorization_servers).toEqual([own.issuer]);
    }

    // On record with who was refused: the token verified, it is just not for this server.
    const refusal = await auditEventLike({
      kind: "authentication_failed",
      server: "only-a",
      reason: "wrong_provider",
    });
    expect(refusal).toMatchObject({
      provider: "b",
      subject: "gateway-test-client",
      status: 401,
      decision: "deny",
      source: "127.0.0.1",
      count: 1,
    });
  });
});

describe("token times", () => {
  test("a token issued 120 s in the future is refused (not_yet_valid), one issued now is accepted", async () => {
    const now = Math.floor(Date.now() / 1000);
    const current = await idpA.sign({ aud: AUDIENCE, iat: now, groups: ["staff"] });
    expect((await initialize("any", current)).status).toBe(200);
    const future = await idpA.sign({ aud: AUDIENCE, iat: now + 120, groups: ["staff"] });
    for (const server of ["any", "only-a"]) {
      const refused = await initialize(server, future);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    await auditEventLike({ kind: "authentication_failed", server: "any", reason: "not_yet_valid" });
  });
});

describe("protected-resource metadata behind the Origin/Host guard", () => {
  const get = (base: string, path: string, headers: Record<string, string> = {}) =>
    request(`${base}${path}`, { headers });
  const PATHS = ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/only-a/mcp"];

  test("a non-loopback Host on a loopback-bound gateway → 403 host_not_allowed, as on /mcp", async () => {
    for (const path of PATHS) {
      const rebound = await get(gateway.url, path, { host: "rebound.evil.example" });
      expect(rebound.statusCode).toBe(403);
      expect(await rebound.body.json()).toMatchObject({ error: { code: "host_not_allowed" } });
      const mcp = await request(`${gateway.url}/only-a/mcp`, { headers: { host: "rebound.evil.example" } });
      expect(mcp.statusCode).toBe(403);
      await mcp.body.dump();
      const local = await get(gateway.url, path);
      expect(local.statusCode).toBe(200);
      await local.body.dump();
    }
  });

  test("a foreign Origin → 403 origin_not_allowed; a loopback one is admitted with CORS", async () => {
    for (const path of PATHS) {
      const foreign = await get(gateway.url, path, { origin: "https://evil.example" });
      expect(foreign.statusCode).toBe(403);
      expect(await foreign.body.json()).toMatchObject({ error: { code: "origin_not_allowed" } });
      const inspector = await get(gateway.url, path, { origin: "http://localhost:6274" });
      expect(inspector.statusCode).toBe(200);
      expect(inspector.headers["access-control-allow-origin"]).toBe("http://localhost:6274");
      await inspector.body.dump();
    }
  });

  test("with SVC_PUBLIC_URL the metadata names it, and the guard still applies", async () => {
    const published = await startGateway(join(dir, "published-audit.jsonl"), {
      SVC_PUBLIC_URL: "https://mcp.example.com",
    });
    const answer = await get(published.url, PATHS[1] ?? "");
    expect(await answer.body.json()).toMatchObject({
      resource: "https://mcp.example.com/only-a/mcp",
      authorization_servers: [idpA.issuer],
    });
    const rebound = await get(published.url, PATHS[1] ?? "", { host: "rebound.evil.example" });
    expect(rebound.statusCode).toBe(403);
    await rebound.body.dump();
    await published.close();
  });
});

describe("a flood of junk tokens", () => {
  test("500 junk-token requests: a bounded number of audit events whose counts add up to 500, chain intact", async () => {
    const floodFile = join(dir, "flood-audit.jsonl");
    const flooded = await startGateway(floodFile);
    const started = Date.now();
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 25 }, () =>
          initialize("any", `junk.${randomBytes(12).toString("base64url")}`, flooded.url),
        ),
      );
      for (const answer of answers) {
        statuses.push(answer.status);
        await answer.body?.cancel();
      }
    }
    const elapsedMs = Date.now() - started;
    await flooded.close(); // drains the audit queue and the open aggregation window into the file
    expect(statuses.filter((status) => status === 401)).toHaveLength(500);

    const events = await auditEvents(floodFile);
    const failures = events.filter((event) => event.kind === "authentication_failed");
    expect(failures.length).toBe(events.length);
    // One key (source, server, reason): per 10 s window its first failure at once and one summary.
    expect(failures.length).toBeLessThanOrEqual(2 * (Math.ceil(elapsedMs / 10_000) + 1));
    expect(failures.reduce((sum, event) => sum + (event.count as number), 0)).toBe(500);
    for (const event of failures) {
      expect(event).toMatchObject({ source: "127.0.0.1", server: "any", reason: "malformed", status: 401 });
    }
    expect(failures[0]).toMatchObject({ count: 1, method: "POST" });
    expect(failures[0]?.request_id).toEqual(expect.any(String));

    const { stdout } = await promisify(execFile)(process.execPath, [BIN, "audit", "verify", floodFile]);
    expect(stdout).toContain(`intact: ${events.length} events`);
  });
});
