// RBAC through a real gateway: tokens from a real OpenID provider carrying groups, the MCP SDK client, and upstreams
// answering in JSON and in SSE. Server level (allow and deny), capability overrides (exact, wildcard, template),
// annotation defaults, layers only restricting, list filtering of all four list methods, call refusal.
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, describe, expect, test, vi } from "vitest";
import { AUDIENCE, connectWithGroups, identityProvidersYaml } from "../identity/support/gateway-identity.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../identity/support/test-identity-provider.ts";
import { startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { type AnnotatedUpstream, startAnnotatedUpstream } from "./support/annotated-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let gateway: TestGateway;

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
  cleanup(() => idp.close());
  const json: AnnotatedUpstream = await startAnnotatedUpstream({ jsonResponse: true });
  cleanup(() => json.close());
  const sse: AnnotatedUpstream = await startAnnotatedUpstream({ jsonResponse: false });
  cleanup(() => sse.close());
  gateway = await startGatewayWithConfig(`version: "1.0"
${identityProvidersYaml(idp)}gateway_policy:
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
`);
  cleanup(() => gateway.close());
});

async function clientFor(server: string, groups: string[]) {
  const { client } = await connectWithGroups(idp, `${gateway.url}/${server}/mcp`, groups);
  cleanup(() => client.close());
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
    postJsonRpc(
      `${gateway.url}/${server}/mcp`,
      initializeRequest(),
      token === undefined ? {} : { authorization: `Bearer ${token}` },
    );

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
