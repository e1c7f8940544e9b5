// The tool-annotation cache behind the capability_rbac defaults, through a real gateway: a real SDK upstream changes
// a tool's annotations while a real SDK client is connected and sends notifications/tools/list_changed on its GET
// stream. The gateway must forget what it learnt the moment that notification passes, so the changed tool is decided
// again (closed until listed, then by its new annotations), not by the stale cache.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { type RunningGateway, startGateway } from "../../src/server/start-gateway.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../identity/support/test-identity-provider.ts";
import { connectClient } from "../proxy/support/gateway.ts";
import { type ChangingUpstream, startChangingUpstream } from "./support/changing-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const AUDIENCE = "https://gateway.test/api";
const cleanups: Array<() => Promise<void>> = [];
let idp: TestIdentityProvider;
let upstream: ChangingUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  idp = await startTestIdentityProvider();
  cleanups.push(() => idp.close());
  upstream = await startChangingUpstream({ readOnlyHint: true });
  cleanups.push(() => upstream.close());
  const dir = await mkdtemp(join(tmpdir(), "svc-gw-hints-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // Readers may use read-only tools, only admins destructive ones; no override names the tool, so the decision
  // rests on its annotations alone.
  const config = `version: "1.0"
identity_providers:
  - name: test-idp
    type: hosted_idp
    issuer: ${JSON.stringify(idp.issuer)}
    jwks_uri: ${JSON.stringify(idp.jwksUri)}
    api_identifiers: [${JSON.stringify(AUDIENCE)}]
gateway_policy:
  capability_rbac:
    read_only: { default_groups: [readers, admins] }
    destructive: { default_groups: [admins] }
    unspecified: { default_groups: [admins] }
servers:
  - name: changing
    url: ${JSON.stringify(upstream.url)}
    upstream_auth_type: none
    rbac_enabled: true
    rbac_mode: allow
    allowed_groups: [readers, admins]
    capability_rbac_enabled: true
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

async function clientFor(groups: string[]): Promise<Client> {
  const token = await idp.token({ resource: AUDIENCE, claims: { groups } });
  const { client } = await connectClient(`${gateway.url}/changing/mcp`, {
    headers: { authorization: `Bearer ${token}` },
  });
  cleanups.push(() => client.close());
  return client;
}

async function waitFor(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The JSON-RPC error code the call was refused with, or undefined when it went through. */
async function refusal(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return error instanceof McpError ? error.code : -1;
  }
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

test("a tool that turns destructive is re-decided once list_changed passes: refused before and after re-listing", async () => {
  const reader = await clientFor(["readers"]);
  let listChanged = 0;
  reader.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  // Listed as read-only: the gateway learns the hint, the reader sees the tool and may call it.
  expect(await toolNames(reader)).toEqual(["mutable"]);
  expect(await reader.callTool({ name: "mutable", arguments: {} })).toMatchObject({
    content: [{ type: "text", text: "mutable ran" }],
  });
  // The notification travels on the client's GET stream: it must be open through the gateway before the change.
  await waitFor(
    async () =>
      (await (await fetch(`${gateway.url}/metrics`)).text()).includes(
        'svc_gateway_open_streams{server="changing"} 1',
      ),
    "the reader's GET stream to open",
  );

  upstream.setAnnotations({ destructiveHint: true });
  await waitFor(() => listChanged > 0, "notifications/tools/list_changed to reach the client");

  // Not listed again yet: with the stale read-only hint the call would go through; forgotten, it is decided closed.
  expect(await refusal(reader.callTool({ name: "mutable", arguments: {} }))).toBe(-32043);
  // Listed again: now known as destructive, hidden from the reader and still refused; an admin may use it.
  expect(await toolNames(reader)).toEqual([]);
  expect(await refusal(reader.callTool({ name: "mutable", arguments: {} }))).toBe(-32043);
  const admin = await clientFor(["admins"]);
  expect(await toolNames(admin)).toEqual(["mutable"]);
  expect(await refusal(admin.callTool({ name: "mutable", arguments: {} }))).toBeUndefined();

  // And back: read-only again after the next list_changed and listing, so the reader may call it once more.
  upstream.setAnnotations({ readOnlyHint: true });
  await waitFor(() => listChanged > 1, "the second list_changed");
  expect(await toolNames(reader)).toEqual(["mutable"]);
  expect(await refusal(reader.callTool({ name: "mutable", arguments: {} }))).toBeUndefined();
});
