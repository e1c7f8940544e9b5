// The tool-annotation cache behind the capability_rbac defaults, through a real gateway: a real SDK upstream changes
// a tool's annotations while a real SDK client is connected and sends notifications/tools/list_changed on its GET
// stream. The gateway must forget what it learnt the moment that notification passes, so the changed tool is decided
// again (closed until listed, then by its new annotations), not by the stale cache.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, expect, test, vi } from "vitest";
import { connectWithGroups, identityProvidersYaml } from "../identity/support/gateway-identity.ts";
import {
  startTestIdentityProvider,
  type TestIdentityProvider,
} from "../identity/support/test-identity-provider.ts";
import { startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { type ChangingUpstream, startChangingUpstream } from "./support/changing-upstream.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let upstream: ChangingUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  idp = await startTestIdentityProvider();
  cleanup(() => idp.close());
  upstream = await startChangingUpstream({ readOnlyHint: true });
  cleanup(() => upstream.close());
  // Readers may use read-only tools, only admins destructive ones; no override names the tool, so the decision
  // rests on its annotations alone.
  gateway = await startGatewayWithConfig(`version: "1.0"
${identityProvidersYaml(idp)}gateway_policy:
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
`);
  cleanup(() => gateway.close());
});

async function clientFor(groups: string[]): Promise<Client> {
  const { client } = await connectWithGroups(idp, `${gateway.url}/changing/mcp`, groups);
  cleanup(() => client.close());
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
