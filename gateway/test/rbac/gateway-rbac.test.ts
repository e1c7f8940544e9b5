// RBAC through a real gateway: tokens from a real OpenID provider carrying groups, the MCP SDK client, and upstreams
// answering in JSON and in SSE. Server level (allow and deny), capability overrides (exact, wildcard, template),
// annotation defaults, layers only restricting, list filtering of all four list methods, call refusal.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { type RunningGateway, startGateway } from "../../src/server/start-gateway.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../identity/support/test-identity-provider.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { type AnnotatedUpstream, startAnnotatedUpstream } from "./support/annotated-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const AUDIENCE = "https://gateway.test/api";
const cleanups: Array<() => Promise<void>> = [];
let idp: TestIdentityProvider;
let gateway: RunningGateway;

function serverYaml(name: string, url: string): string {
  return `  - name: ${name}
    url: ${JSON.stringify(url)}
    upstream_auth_type: none
    rbac_enabled: true
    rbac_mode: allow
    allowed_groups: [readers, writers, admins, outsiders-too]
    capability_rbac_enabled: true
    capability_overrides:
      - capability: prompts/secret-prompt
        allowed_groups: [admins]
      - capability: "prompts/*"
        allowed_groups: [readers, writers, admins]
      - capability: resources/file:///secret.txt
        allowed_groups: [admins]
      - capability: "resources/file:///private/{name}"
        allowed_groups: [admins]
      - capability: tools/admin-tool
        allowed_groups: [admins, outsiders]
`;
}

beforeAll(async () => {
  idp = await startTestIdentityProvider();
  cleanups.push(() => idp.close());
  const json: AnnotatedUpstream = await startAnnotatedUpstream({ jsonResponse: true });
  cleanups.push(() => json.close());
  const sse: AnnotatedUpstream = await startAnnotatedUpstream({ jsonResponse: false });
  cleanups.push(() => sse.close());
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-rbac-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const config = `version: "1.0"
identity_providers:
  - name: test-idp
    type: hosted_idp
    issuer: ${JSON.stringify(idp.issuer)}
    jwks_uri: ${JSON.stringify(idp.jwksUri)}
    api_identifiers: [${JSON.stringify(AUDIENCE)}]
gateway_policy:
  capability_rbac:
    read_only: { default_groups: [readers, writers, admins] }
    destructive: { default_groups: [admins] }
    unspecified: { default_groups: [writers, admins] }
servers:
${serverYaml("json", json.url)}${serverYaml("sse", sse.url)}  - name: denylist
    url: ${JSON.stringify(json.url)}
    upstream_auth_type: none
    rbac_enabled: true
    rbac_mode: deny
    denied_groups: [banned]
`;
  await writeFile(join(dir, "config.yaml"), config);
  gateway = await startGateway({
    configPath: join(dir, "config.yaml"),
    host: "127.0.0.1",
    port: 0,
    env: { LOG_LEVEL: "silent", SVC_CONFIG_POLL_SECONDS: "0", SVC_AUDIT_FILE: "/dev/null" },
  });
  cleanups.push(() => gateway.close());
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

async function clientFor(server: string, groups: string[]) {
  const token = await idp.token({ resource: AUDIENCE, claims: { groups } });
  const { client } = await connectClient(`${gateway.url}/${server}/mcp`, {
    headers: { authorization: `Bearer ${token}` },
  });
  cleanups.push(() => client.close());
  return client;
}

async function refusal(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return error instanceof McpError ? error.code : -1;
  }
}

describe.each(["sse", "json"])("answers in %s", (server) => {
  test("a tool whose annotations the gateway has not seen yet is decided closed (as destructive)", async () => {
    const writer = await clientFor(server, ["writers"]);
    // No tools/list through this server yet: "plain" (unspecified → writers) is treated as destructive (admins).
    expect(await refusal(writer.callTool({ name: "plain", arguments: {} }))).toBe(-32043);
    await writer.listTools();
    expect((await writer.callTool({ name: "plain", arguments: {} })).content).toEqual([
      { type: "text", text: "plain" },
    ]);
  });

  test.each([
    {
      who: "readers",
      tools: ["read"],
      prompts: ["public-prompt"],
      resources: ["file:///public.txt"],
      templates: ["file:///logs/{date}"],
    },
    {
      who: "writers",
      tools: ["plain", "read"],
      prompts: ["public-prompt"],
      resources: ["file:///public.txt"],
      templates: ["file:///logs/{date}"],
    },
    {
      who: "admins",
      tools: ["admin-tool", "plain", "read", "wipe"],
      prompts: ["public-prompt", "secret-prompt"],
      resources: ["file:///public.txt", "file:///secret.txt"],
      templates: ["file:///logs/{date}", "file:///private/{name}"],
    },
  ])(
    "$who see only what they may use, in all four lists",
    async ({ who, tools, prompts, resources, templates }) => {
      const client = await clientFor(server, [who]);
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(tools);
      expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(prompts);
      expect((await client.listResources()).resources.map((r) => r.uri).sort()).toEqual(resources);
      expect(
        (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate).sort(),
      ).toEqual(templates);
    },
  );

  test("calls follow the same decision: what is hidden is refused with -32043, what is shown works", async () => {
    const reader = await clientFor(server, ["readers"]);
    await reader.listTools();
    expect((await reader.callTool({ name: "read", arguments: {} })).content).toEqual([
      { type: "text", text: "read" },
    ]);
    expect(await refusal(reader.callTool({ name: "wipe", arguments: {} }))).toBe(-32043);
    expect(await refusal(reader.callTool({ name: "admin-tool", arguments: {} }))).toBe(-32043);
    expect(await refusal(reader.getPrompt({ name: "secret-prompt" }))).toBe(-32043);
    expect(await refusal(reader.readResource({ uri: "file:///secret.txt" }))).toBe(-32043);
    expect(await refusal(reader.readResource({ uri: "file:///private/x" }))).toBe(-32043);
    expect(await refusal(reader.getPrompt({ name: "public-prompt" }))).toBeUndefined();
    expect(await refusal(reader.readResource({ uri: "file:///logs/2026-01-01" }))).toBeUndefined();
    const admin = await clientFor(server, ["admins"]);
    expect((await admin.callTool({ name: "wipe", arguments: {} })).content).toEqual([
      { type: "text", text: "wiped" },
    ]);
  });
});

describe("server level", () => {
  const initialize = (server: string, token?: string) =>
    fetch(`${gateway.url}/${server}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      }),
    });

  test("allow mode: a user in no allowed group gets 403 with a JSON body, even where an override names them", async () => {
    // `outsiders` is allowed by the tools/admin-tool override, but not by the server: lower layers only restrict.
    const token = await idp.token({ resource: AUDIENCE, claims: { groups: ["outsiders"] } });
    const response = await initialize("json", token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: "forbidden", server: "json" } });
  });

  test("deny mode: members of a denied group get 403, everyone else passes", async () => {
    const banned = await initialize(
      "denylist",
      await idp.token({ resource: AUDIENCE, claims: { groups: ["banned"] } }),
    );
    expect(banned.status).toBe(403);
    const other = await initialize(
      "denylist",
      await idp.token({ resource: AUDIENCE, claims: { groups: ["x"] } }),
    );
    await other.arrayBuffer();
    expect(other.status).toBe(200);
  });
});
