import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { decodeJwt } from "jose";
import { initializeRequest, postJsonRpc } from "svc-testkit/json-rpc";
import { startVendor, type Vendor } from "svc-testkit/vendor-authorization-server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../gateway/bench/free-port.ts";
import { RedisServer } from "../../gateway/test/kv/redis-server.ts";
import {
  type CompanyLoginIdp,
  GATEWAY_AUDIENCE,
  LOGIN_CLIENT,
  startCompanyLoginIdp,
} from "../../gateway/test/upstream-oauth/support/company-login-idp.ts";
import { FormBrowser } from "../../gateway/test/upstream-oauth/support/form-browser.ts";
import {
  buildFrameworkProject,
  type FrameworkServer,
  runFrameworkServer,
} from "./support/framework-server.ts";
import { startGatewayProcess } from "./support/gateway-process.ts";
import { type MetadataHidingProxy, startMetadataHidingProxy } from "./support/metadata-hiding-proxy.ts";
import type { ListeningProcess } from "./support/spawn-listening.ts";

// Upstream OAuth end to end: a third-party MCP server built with our framework (JWT auth against its vendor's
// authorization server, a real oidc-provider with a login and consent screen) behind two gateway replicas sharing
// Redis. A user's MCP client calls a tool, gets the gateway's connect link in its error, a browser follows it, signs in
// at the company identity provider (the link checks it is that user's), logs in at the vendor and consents; the
// retried call succeeds with the user's own vendor token, never the gateway's. Vendors run on loopback over plain
// http, so the gateway runs with SVC_ALLOW_INSECURE_UPSTREAM_OAUTH (development).

const SCOPE = "mcp:tools";
const CALLBACK = "/oauth/upstream/callback";
const PREREGISTERED = { id: "svc-gateway-prereg", secret: "prereg-secret-0123456789abcdef0123" };

let scratch: string;
let redis: RedisServer;
let idp: CompanyLoginIdp;
let vendor: Vendor;
let closedVendor: Vendor;
let hiding: MetadataHidingProxy;
const upstreams: FrameworkServer[] = [];
let replicas: ListeningProcess[];
let gatewayUrls: string[];

/** A framework project whose `whoami` tool reports the bearer token the upstream received. */
async function prepareProject(directory: string): Promise<void> {
  await writeFile(
    join(directory, "auth.ts"),
    `import { configureAuth, JWTAuthConfig } from "@svc-mcp/framework/auth";
configureAuth(new JWTAuthConfig({ jwks_uri_env_var: "JWKS_URI", issuer_env_var: "JWT_ISSUER", audience_env_var: "JWT_AUDIENCE", required_scopes: ["${SCOPE}"] }));
`,
  );
  await mkdir(join(directory, "tools"), { recursive: true });
  await writeFile(
    join(directory, "tools", "whoami.ts"),
    `import { defineTool } from "@svc-mcp/framework";
import { getAuthToken } from "@svc-mcp/framework/auth";
export default defineTool({ description: "The bearer token this server received", handler: async () => getAuthToken() ?? "none" });
`,
  );
}

/** One instance of the built project, trusting `authorizationServer`'s tokens for its own /mcp. */
async function upstreamFor(
  project: string,
  authorizationServer: Vendor,
  /** The URL clients reach it at, when not its own (behind a proxy). */
  publicMcpUrl?: string,
): Promise<FrameworkServer> {
  const port = await freePort();
  const server = await runFrameworkServer(project, {
    PORT: String(port),
    SVC_DATA_DIR: join(scratch, `data-${port}`),
    JWKS_URI: authorizationServer.jwksUri,
    JWT_ISSUER: authorizationServer.issuer,
    JWT_AUDIENCE: publicMcpUrl ?? `http://127.0.0.1:${port}/mcp`,
  });
  upstreams.push(server);
  return server;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "svc-e2e-upstream-oauth-"));
  redis = await RedisServer.start();
  const project = join(scratch, "vendor-mcp");
  await buildFrameworkProject(project, prepareProject);
  const ports = [await freePort(), await freePort()];
  gatewayUrls = ports.map((port) => `http://127.0.0.1:${port}`);
  // Both replicas are one gateway to the outside: one public URL (the first), so one callback for the vendors.
  const publicUrl = gatewayUrls[0] as string;
  idp = await startCompanyLoginIdp(publicUrl);
  vendor = await startVendor({ registration: true, scope: SCOPE });
  closedVendor = await startVendor({
    registration: false,
    scope: SCOPE,
    preregistered: { ...PREREGISTERED, redirectUri: `${publicUrl}${CALLBACK}` },
  });
  const open = await upstreamFor(project, vendor);
  const closed = await upstreamFor(project, closedVendor);
  const scoped = await upstreamFor(project, vendor);
  hiding = await startMetadataHidingProxy();
  hiding.target = (await upstreamFor(project, vendor, `${hiding.url}/mcp`)).url;
  const config = [
    'version: "1.0"',
    "identity_providers:",
    "  - name: company",
    "    type: hosted_idp",
    `    issuer: ${JSON.stringify(idp.issuer)}`,
    `    jwks_uri: ${JSON.stringify(idp.jwksUri)}`,
    `    api_identifiers: [${JSON.stringify(GATEWAY_AUDIENCE)}]`,
    `    login_client_id: ${LOGIN_CLIENT.id}`,
    "    login_client_secret: ${LOGIN_SECRET}",
    "servers:",
    "  - name: vendor",
    `    url: ${JSON.stringify(open.mcpUrl)}`,
    "  - name: prereg",
    `    url: ${JSON.stringify(closed.mcpUrl)}`,
    `    preregistered_client_id: ${PREREGISTERED.id}`,
    "    preregistered_client_secret: ${PREREG_SECRET}",
    "  - name: scoped",
    `    url: ${JSON.stringify(scoped.mcpUrl)}`,
    `    scopes_override: "${SCOPE} offline_access"`,
    "  - name: hidden",
    `    url: ${JSON.stringify(`${hiding.url}/mcp`)}`,
    `    auth_server_url: ${JSON.stringify(vendor.issuer)}`,
    // Nothing is advertised, and this vendor (like most) refuses an authorization request naming no scope.
    `    scopes_override: ${SCOPE}`,
    "  - name: bare",
    `    url: ${JSON.stringify(`${hiding.url}/mcp`)}`,
    "",
  ].join("\n");
  const configPath = join(scratch, "gateway.yaml");
  await writeFile(configPath, config);
  const env = {
    SVC_AUDIT_FILE: join(scratch, "audit.jsonl"),
    SVC_PUBLIC_URL: publicUrl,
    SVC_OAUTH_KV_KEY: randomBytes(32).toString("base64"),
    REDIS_URL: redis.url,
    PREREG_SECRET: PREREGISTERED.secret,
    LOGIN_SECRET: LOGIN_CLIENT.secret,
    SVC_ALLOW_INSECURE_UPSTREAM_OAUTH: "true",
  };
  replicas = await Promise.all(ports.map((port) => startGatewayProcess(configPath, env, port)));
});

afterAll(async () => {
  await Promise.all((replicas ?? []).map((gateway) => gateway.stop()));
  await Promise.all(upstreams.map((server) => server.stop()));
  await vendor?.close();
  await closedVendor?.close();
  await hiding?.close();
  await idp?.close();
  await redis?.kill();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

type Outcome = { token: string } | { error: McpError };

async function gatewayToken(user: string): Promise<string> {
  return user === "machine" ? idp.machineToken("machine-client") : idp.userToken(user);
}

/** `user` calls `whoami` on `server` through replica `replica`: the vendor token the upstream saw, or the MCP error. */
async function whoami(
  user: string,
  server = "vendor",
  replica = 0,
): Promise<Outcome & { gatewayToken: string }> {
  const token = await gatewayToken(user);
  const client = new Client({ name: "upstream-oauth-e2e", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gatewayUrls[replica]}/${server}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const result = await client.callTool({ name: "whoami", arguments: {} });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? "";
    return { token: text, gatewayToken: token };
  } catch (error) {
    if (error instanceof McpError) return { error, gatewayToken: token };
    throw error;
  } finally {
    await client.close();
  }
}

/** The connect link of the gateway's -32042 error, as the MCP SDK client shows it (UrlElicitationRequiredError). */
function authorizationUrlOf(outcome: Outcome): string {
  if (!("error" in outcome)) throw new Error("expected the authorization error, got a token");
  expect(outcome.error.code).toBe(-32042);
  const { elicitations } = outcome.error.data as { elicitations: Array<{ mode: string; url: string }> };
  expect(elicitations).toHaveLength(1);
  expect(elicitations[0]?.mode).toBe("url");
  return elicitations[0]?.url as string;
}

/** Where the connect link leads `user`'s browser at the vendor: the vendor's authorization URL. */
async function vendorUrlOf(link: string, user: string, vendorIssuer = vendor.issuer): Promise<URL> {
  return (await new FormBrowser(user).open(link, `${vendorIssuer}/auth?`)).url;
}

/**
 * The user's browser: opens the link, signs in at the company provider, logs in at the vendor, consents, and lands on
 * the gateway's callback; returns that page, and the browser (to replay the callback in it).
 */
async function consent(
  link: string,
  user: string,
): Promise<{ landed: URL; status: number; page: string; browser: FormBrowser }> {
  const browser = new FormBrowser(user);
  const atCallback = await browser.open(link, `${gatewayUrls[0]}${CALLBACK}`);
  const done = await browser.open(atCallback.url.href);
  return { landed: atCallback.url, status: done.status, page: done.text, browser };
}

/** Cold start to a connected user: refused with the URL, consent, then the call succeeds. */
async function connect(user: string, server = "vendor"): Promise<string> {
  const url = authorizationUrlOf(await whoami(user, server));
  const landing = await consent(url, user);
  expect(landing.page).toContain("is connected");
  expect(landing.status).toBe(200);
  const after = await whoami(user, server);
  if (!("token" in after)) throw after.error;
  return after.token;
}

describe("upstream OAuth towards a framework-built third-party server", () => {
  it("sends the user to the vendor's consent, then calls with the user's own vendor token (DCR)", async () => {
    const first = await whoami("alice");
    const link = authorizationUrlOf(first);
    expect(new URL(link).origin).toBe(gatewayUrls[0]);
    const url = await vendorUrlOf(link, "alice");
    expect(url.origin).toBe(vendor.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("scope")).toBe(SCOPE);
    expect(url.searchParams.get("resource")).toBe(upstreams[0]?.mcpUrl);
    expect(url.searchParams.get("redirect_uri")).toBe(`${gatewayUrls[0]}${CALLBACK}`);

    const landing = await consent(authorizationUrlOf(await whoami("alice")), "alice");
    expect(landing.status).toBe(200);
    const after = await whoami("alice");
    if (!("token" in after)) throw after.error;
    const claims = decodeJwt(after.token);
    expect(claims.iss).toBe(vendor.issuer);
    expect(claims.sub).toBe("alice");
    expect(claims.aud).toBe(upstreams[0]?.mcpUrl);
    // The upstream saw the vendor's token, never the gateway's.
    expect(after.token).not.toBe(after.gatewayToken);
    expect(decodeJwt(after.gatewayToken).iss).toBe(idp.issuer);

    // A replayed callback (the same state again, in the same browser) is refused, and changes nothing.
    const replay = await landing.browser.open(landing.landed.href);
    expect(replay.status).toBe(400);
    expect(replay.text).toMatch(/already used state/);
    expect("token" in (await whoami("alice"))).toBe(true);
  });

  it("carries the URL in the JSON-RPC error's data, for clients without URL elicitation too", async () => {
    const answer = await postJsonRpc(`${gatewayUrls[0]}/vendor/mcp`, initializeRequest(7), {
      authorization: `Bearer ${await gatewayToken("grace")}`,
    });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      id: number;
      error: { code: number; message: string; data: Record<string, unknown> };
    };
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32042);
    expect(body.error.message).toMatch(/^Connect your account at 'vendor' first: open http/);
    expect(body.error.message).not.toContain(vendor.issuer);
    expect(body.error.message).toContain(body.error.data.authorization_url as string);
    expect(body.error.data).toMatchObject({
      reason: "upstream_authorization_required",
      server: "vendor",
      expires_in: 600,
      authorization_url: expect.stringMatching(new RegExp(`^${gatewayUrls[0]}/oauth/upstream/connect/`)),
      elicitations: [expect.objectContaining({ mode: "url" })],
    });
    // Asking again while the first link is still good hands out the same link (one pending request per user and server).
    const again = await whoami("grace");
    expect(authorizationUrlOf(again)).toBe(body.error.data.authorization_url);
  });

  it("never uses a token stored for one user for another: a second user gets their own", async () => {
    const bobFirst = await whoami("bob");
    expect("error" in bobFirst).toBe(true);
    const bobToken = await connect("bob");
    expect(decodeJwt(bobToken).sub).toBe("bob");
    const alice = await whoami("alice");
    if (!("token" in alice)) throw alice.error;
    expect(decodeJwt(alice.token).sub).toBe("alice");
  });

  it("refuses a callback with a state it never issued", async () => {
    const forged = await fetch(`${gatewayUrls[0]}${CALLBACK}?code=abc&state=${"x".repeat(43)}`);
    expect(forged.status).toBe(400);
    const none = await fetch(`${gatewayUrls[0]}${CALLBACK}?code=abc`);
    expect(none.status).toBe(400);
  });

  it("serves the same user's connection from the other replica (shared Redis)", async () => {
    const other = await whoami("alice", "vendor", 1);
    if (!("token" in other)) throw other.error;
    expect(decodeJwt(other.token).sub).toBe("alice");
  });

  it("refreshes a token close to expiry without the user, and sends them to consent once the vendor revokes", async () => {
    vendor.setAccessTokenTtl(30); // inside the gateway's refresh margin: every use refreshes first
    await connect("carol");
    const before = vendor.refreshes();
    const again = await whoami("carol");
    if (!("token" in again)) throw again.error;
    expect(vendor.refreshes()).toBeGreaterThan(before);
    expect(decodeJwt(again.token).sub).toBe("carol");

    await vendor.revokeUser("carol");
    const revoked = await whoami("carol");
    authorizationUrlOf(revoked);
    vendor.setAccessTokenTtl(3600);
    expect(decodeJwt(await connect("carol")).sub).toBe("carol");
  });

  it("renews once for concurrent calls of one user on both replicas: the rotated refresh token is never reused", async () => {
    vendor.setAccessTokenTtl(30); // every use refreshes first
    try {
      await connect("judy");
      const before = vendor.refreshes();
      const calls = await Promise.all([0, 1, 0, 1, 0, 1].map((replica) => whoami("judy", "vendor", replica)));
      for (const call of calls) {
        if (!("token" in call)) throw call.error; // a reused refresh token would have revoked the grant: consent
        expect(decodeJwt(call.token).sub).toBe("judy");
      }
      expect(vendor.refreshes()).toBeGreaterThan(before);
    } finally {
      vendor.setAccessTokenTtl(3600);
    }
  });

  it("steps up when the upstream answers insufficient_scope, naming the scope it wants", async () => {
    vendor.setGrantedScope("");
    try {
      const url = authorizationUrlOf(await whoami("dave"));
      await consent(url, "dave");
      // The token lacks the scope the upstream requires: the user is sent back with the scope named.
      const stepUp = await whoami("dave");
      if (!("error" in stepUp)) throw new Error("expected a step-up");
      expect(stepUp.error.code).toBe(-32042);
      expect(stepUp.error.message).toContain(`needs the scopes ${SCOPE}`);
    } finally {
      vendor.setGrantedScope(SCOPE);
    }
    const url = authorizationUrlOf(await whoami("dave"));
    await consent(url, "dave");
    const after = await whoami("dave");
    if (!("token" in after)) throw after.error;
    expect(decodeJwt(after.token).scope).toContain(SCOPE);
  });

  it("uses a server-wide client_credentials token for a machine caller", async () => {
    const machine = await whoami("machine");
    if (!("token" in machine)) throw machine.error;
    const claims = decodeJwt(machine.token);
    expect(claims.iss).toBe(vendor.issuer);
    expect(claims.aud).toBe(upstreams[0]?.mcpUrl);
    expect(claims.scope).toContain(SCOPE);
  });

  it("lists and revokes the user's connections", async () => {
    const headers = { authorization: `Bearer ${await gatewayToken("alice")}` };
    const listed = await fetch(`${gatewayUrls[1]}/oauth/upstream/connections`, { headers });
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { connections: Array<{ server: string; scope: string }> };
    expect(body.connections.map((c) => c.server)).toEqual(["vendor"]);
    expect(JSON.stringify(body)).not.toMatch(/eyJ/); // no token value
    const unauthenticated = await fetch(`${gatewayUrls[0]}/oauth/upstream/connections`);
    expect(unauthenticated.status).toBe(401);

    const revoked = await fetch(`${gatewayUrls[0]}/oauth/upstream/connections/vendor`, {
      method: "DELETE",
      headers,
    });
    expect(revoked.status).toBe(204);
    authorizationUrlOf(await whoami("alice"));
    const gone = await fetch(`${gatewayUrls[0]}/oauth/upstream/connections/vendor`, {
      method: "DELETE",
      headers,
    });
    expect(gone.status).toBe(404);
  });
});

describe("the other ways to reach a vendor", () => {
  it("uses the preregistered client where the vendor offers no Dynamic Client Registration", async () => {
    const url = await vendorUrlOf(
      authorizationUrlOf(await whoami("erin", "prereg")),
      "erin",
      closedVendor.issuer,
    );
    expect(url.origin).toBe(closedVendor.issuer);
    expect(url.searchParams.get("client_id")).toBe(PREREGISTERED.id);
    const landing = await consent(authorizationUrlOf(await whoami("erin", "prereg")), "erin");
    expect(landing.status).toBe(200);
    const after = await whoami("erin", "prereg");
    if (!("token" in after)) throw after.error;
    expect(decodeJwt(after.token).iss).toBe(closedVendor.issuer);
  });

  it("requests scopes_override instead of the scopes the upstream advertises", async () => {
    const url = await vendorUrlOf(authorizationUrlOf(await whoami("frank", "scoped")), "frank");
    expect(url.searchParams.get("scope")).toBe(`${SCOPE} offline_access`);
    await consent(authorizationUrlOf(await whoami("frank", "scoped")), "frank");
    const after = await whoami("frank", "scoped");
    if (!("token" in after)) throw after.error;
    expect(decodeJwt(after.token).sub).toBe("frank");
  });

  it("uses auth_server_url (and scopes_override) for an upstream publishing no metadata", async () => {
    const url = await vendorUrlOf(authorizationUrlOf(await whoami("heidi", "hidden")), "heidi");
    expect(url.origin).toBe(vendor.issuer);
    expect(url.searchParams.get("resource")).toBe(`${hiding.url}/mcp`);
    expect(url.searchParams.get("scope")).toBe(SCOPE);
    const landing = await consent(authorizationUrlOf(await whoami("heidi", "hidden")), "heidi");
    expect(landing.page).toContain("is connected");
    const after = await whoami("heidi", "hidden");
    if (!("token" in after)) throw after.error;
    expect(decodeJwt(after.token).aud).toBe(`${hiding.url}/mcp`);
  });

  it("refreshes once and retries when the upstream answers invalid_token; a second refusal sends the user to consent", async () => {
    const before = vendor.refreshes();
    hiding.rejectNext(1);
    const retried = await whoami("heidi", "hidden");
    if (!("token" in retried)) throw retried.error;
    expect(vendor.refreshes()).toBe(before + 1);

    hiding.rejectNext(2); // the refreshed token is refused as well: no loop, consent
    authorizationUrlOf(await whoami("heidi", "hidden"));
    hiding.rejectNext(0);
  });

  it("tells the client which server lacks metadata and what to set, when there is no auth_server_url", async () => {
    const answer = await postJsonRpc(
      `${gatewayUrls[0]}/bare/mcp`,
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { authorization: `Bearer ${await gatewayToken("ivan")}` },
    );
    expect(answer.status).toBe(502);
    const body = (await answer.json()) as { error: { message: string; data: { reason: string } } };
    expect(body.error.data.reason).toBe("upstream_oauth_failed");
    expect(body.error.message).toMatch(
      /^Upstream server 'bare' uses upstream_auth_type oauth but publishes no usable protected-resource metadata .*set auth_server_url/,
    );
  });
});

describe("the audit trail", () => {
  it("records connect, refresh, revoke and failures, and never a token", async () => {
    const auditFile = join(scratch, "audit.jsonl");
    const events = await vi.waitFor(
      async () => {
        const lines = (await readFile(auditFile, "utf8")).trim().split("\n");
        const reasons = lines
          .map((line) => JSON.parse(line) as { kind: string; reason: string })
          .filter((event) => event.kind === "upstream_oauth")
          .map((event) => event.reason);
        for (const reason of [
          "authorization_requested",
          "connected",
          "refreshed",
          "refresh_failed",
          "revoked",
        ]) {
          expect(reasons).toContain(reason);
        }
        return lines;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(events.join("\n")).not.toMatch(/eyJ[A-Za-z0-9_-]+\./); // no JWT, upstream or gateway
  });
});
