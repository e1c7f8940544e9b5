// Group sync through a real gateway: a directory_idp whose tokens (signed by a real OpenID provider) carry no groups
// but the overage claim, a loopback Microsoft Graph fake answering transitiveMemberOf, RBAC on the synced group ids,
// and an outage visible in /health and /metrics without granting anything the token does not carry.
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { beforeAll, expect, test, vi } from "vitest";
import { startGatewayWithConfig, type TestGateway } from "../proxy/support/gateway.ts";
import { cleanupsAfterAll } from "../support/cleanups.ts";
import { AUDIENCE, startIdentityProviderAndUpstream } from "./support/gateway-identity.ts";
import {
  type DirectoryIdpFake,
  startDirectoryIdpFake,
} from "./support/management-fakes/directory-idp-fake.ts";
import type { TestIdentityProvider } from "./support/test-identity-provider.ts";

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const cleanup = cleanupsAfterAll();
let idp: TestIdentityProvider;
let graph: DirectoryIdpFake;
let gateway: TestGateway;

const ENGINEERS = "0f1e2d3c-engineers";

beforeAll(async () => {
  const started = await startIdentityProviderAndUpstream(cleanup);
  idp = started.idp;
  graph = await startDirectoryIdpFake();
  cleanup(() => graph.close());
  gateway = await startGatewayWithConfig(
    `version: "1.0"
identity_providers:
  - name: entra
    type: directory_idp
    issuer: ${JSON.stringify(idp.issuer)}
    jwks_uri: ${JSON.stringify(idp.jwksUri)}
    api_identifiers: [${JSON.stringify(AUDIENCE)}]
    tenant_id: ${graph.tenant}
    client_id: ${graph.clientId}
    client_secret: \${GRAPH_SECRET}
    management_url: ${graph.url}
    management_token_url: ${graph.url}/${graph.tenant}/oauth2/v2.0/token
servers:
  - name: docs
    url: ${JSON.stringify(started.upstream.url)}
    upstream_auth_type: none
    rbac_enabled: true
    rbac_mode: allow
    allowed_groups: [${ENGINEERS}]
`,
    { GRAPH_SECRET: graph.clientSecret },
  );
  cleanup(() => gateway.close());
});

/** A token as Entra issues it for a user in too many groups: no `groups`, the overage claim instead. */
function overageToken(oid: string): Promise<string> {
  return idp.sign({
    aud: AUDIENCE,
    sub: `pairwise-${oid}`,
    oid,
    _claim_names: { groups: "src1" },
    _claim_sources: {
      src1: { endpoint: `https://graph.windows.net/${graph.tenant}/users/${oid}/getMemberObjects` },
    },
  });
}

const initialize = async (token: string) =>
  (await postJsonRpc(`${gateway.url}/docs/mcp`, initializeRequest(), { authorization: `Bearer ${token}` }))
    .status;

test("the overage claim is resolved through Graph: RBAC admits a member of the allowed group, refuses others", async () => {
  graph.users.set("oid-eng", ["other-group", ENGINEERS]);
  graph.users.set("oid-sales", ["sales"]);
  expect(await initialize(await overageToken("oid-eng"))).toBe(200);
  expect(await initialize(await overageToken("oid-sales"))).toBe(403);
  const health = await (await fetch(`${gateway.url}/health`)).json();
  expect(health).toMatchObject({ status: "healthy", group_sync: { entra: { state: "ok", fallbacks: 0 } } });
});

test("an outage falls back (a cached user keeps the synced groups, a new one only the token's), is counted and shown", async () => {
  graph.users.set("oid-new", [ENGINEERS]);
  graph.down = true;
  try {
    // oid-eng is cached from the previous test and younger than the TTL: unaffected.
    expect(await initialize(await overageToken("oid-eng"))).toBe(200);
    // Never looked up before: only the token's own groups (none), so RBAC refuses. Nothing is granted on failure.
    expect(await initialize(await overageToken("oid-new"))).toBe(403);
    const health = await fetch(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({
      status: "degraded",
      group_sync: {
        entra: { state: "failing", fallbacks: 1, last_error: expect.stringMatching(/HTTP 503/) },
      },
    });
    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain('svc_gateway_group_sync_fallbacks_total{provider="entra",source="token"} 1');
    expect(metrics).not.toContain(graph.clientSecret);
  } finally {
    graph.down = false;
  }
  expect(await initialize(await overageToken("oid-new"))).toBe(200);
  expect(await (await fetch(`${gateway.url}/health`)).json()).toMatchObject({ status: "healthy" });
});
