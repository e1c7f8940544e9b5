import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { readResources } from "../src/cli/read-resources.ts";
import { formatResourceProblem } from "../src/render/problems.ts";
import { renderAll } from "../src/render/render-all.ts";
import type { Resource } from "../src/render/resources.ts";
import { expectGolden } from "./golden.ts";
import { examplesDir } from "./paths.ts";

const gateway = (spec: Record<string, unknown> = {}, namespace = "gw"): Resource => ({
  apiVersion: "mcp.svc.dev/v1alpha1",
  kind: "McpGateway",
  metadata: { name: "main", namespace, uid: "uid-gateway", generation: 1 },
  spec,
});
const server = (
  name: string,
  spec: Record<string, unknown>,
  namespace = "gw",
  labels?: Record<string, string>,
): Resource => ({
  apiVersion: "mcp.svc.dev/v1alpha1",
  kind: "McpServer",
  metadata: { name, namespace, uid: `uid-${name}`, ...(labels ? { labels } : {}) },
  spec,
});
const idp = (name: string, spec: Record<string, unknown>, namespace = "gw"): Resource => ({
  apiVersion: "mcp.svc.dev/v1alpha1",
  kind: "IdentityProvider",
  metadata: { name, namespace },
  spec,
});
const problemsOf = (resources: Resource[]) => renderAll(resources).problems.map(formatResourceProblem);

describe("render", () => {
  it("renders the examples (golden files)", () => {
    const result = renderAll(readResources(examplesDir));
    expect(result.problems).toEqual([]);
    const objects = expectGolden(
      "examples.objects.yaml",
      result.objects.map((object) => stringify(object, { lineWidth: 0 })).join("---\n"),
    );
    expect(objects.actual).toBe(objects.expected);
    const config = expectGolden("examples.gateway.yaml", result.gateways[0]?.yaml ?? "");
    expect(config.actual).toBe(config.expected);
    const secrets = renderAll(readResources(join(examplesDir, "with-secrets")));
    expect(secrets.problems).toEqual([]);
    const withSecrets = expectGolden(
      "with-secrets.objects.yaml",
      secrets.objects.map((object) => stringify(object, { lineWidth: 0 })).join("---\n"),
    );
    expect(withSecrets.actual).toBe(withSecrets.expected);
  });

  it("keeps secret values out of the ConfigMap: ${VAR} in the YAML, secretKeyRef env on the gateway container", () => {
    // A disabled exporter: the secret-bearing fields the gateway accepts today belong to features it does not build.
    const exporter = {
      name: "audit",
      enabled: false,
      url: "https://search.example",
      apiKey: { secretKeyRef: { name: "s", key: "k" } },
    };
    const result = renderAll([
      gateway({ containerName: "gw", deploymentName: "edge", exporters: { searchIndex: [exporter] } }),
    ]);
    expect(result.problems).toEqual([]);
    const render = result.gateways[0];
    const variable = render?.env[0]?.name ?? "";
    expect(variable).toMatch(/^SVC_SECRET_MCP_GATEWAY_MAIN_EXPORTERS_SEARCH_INDEX_0_API_KEY_[0-9A-F]{6}$/);
    expect(render?.yaml).toContain(`api_key: \${${variable}}`);
    expect(render?.gatewayEnvPatch).toMatchObject({
      kind: "Deployment",
      metadata: { name: "edge", namespace: "gw" },
      spec: {
        template: {
          spec: {
            containers: [
              { name: "gw", env: [{ name: variable, valueFrom: { secretKeyRef: { name: "s", key: "k" } } }] },
            ],
          },
        },
      },
    });
    expect(render?.configMap.metadata.ownerReferences).toEqual([
      {
        apiVersion: "mcp.svc.dev/v1alpha1",
        kind: "McpGateway",
        name: "main",
        uid: "uid-gateway",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it("header maps (OTLP exporter, firewall webhook) take every value from a Secret: the key as written, ${VAR} as value", () => {
    const otel = {
      name: "collector",
      enabled: false,
      endpoint: "https://otel.example:4318",
      headers: { authorization: { secretKeyRef: { name: "otel", key: "token" } } },
    };
    const result = renderAll([
      gateway({
        exporters: { otel: [otel] },
        gatewayPolicy: {
          firewall: {
            enabled: true,
            detectors: [
              {
                type: "webhook",
                name: "vendor",
                url: "https://detector.example/score",
                headers: { "x-api-key": { secretKeyRef: { name: "detector", key: "key" } } },
              },
            ],
          },
        },
      }),
    ]);
    expect(result.problems).toEqual([]);
    const render = result.gateways[0];
    const names = (render?.env ?? []).map((entry) => entry.name);
    expect(names).toHaveLength(2);
    for (const name of names) expect(render?.yaml).toContain(`\${${name}}`);
    expect(render?.yaml).toMatch(/authorization: \$\{SVC_SECRET_[A-Z0-9_]+\}/);
    expect(render?.yaml).toMatch(/x-api-key: \$\{SVC_SECRET_[A-Z0-9_]+\}/);
    expect(render?.yaml).not.toContain("token");
    // What is not a secret is written as { value }; a bare string is refused, naming the field.
    const plain = renderAll([
      gateway({ exporters: { otel: [{ ...otel, headers: { "x-scope-orgid": { value: "svc" } } }] } }),
    ]);
    expect(plain.problems).toEqual([]);
    expect(plain.gateways[0]?.yaml).toContain("x-scope-orgid: svc");
    expect(
      problemsOf([
        gateway({ exporters: { otel: [{ ...otel, headers: { authorization: "Bearer plain" } }] } }),
      ]),
    ).toEqual(["McpGateway gw/main: spec.exporters.otel[0].headers.authorization: must be object"]);
  });

  it("selects by namespace and labels", () => {
    const resources = [
      gateway({ serverSelector: { namespaces: ["gw", "team-a"], matchLabels: { tier: "prod" } } }),
      server("same-ns", { url: "http://a.example/mcp" }, "gw", { tier: "prod" }),
      server("other-ns", { url: "http://b.example/mcp" }, "team-a", { tier: "prod" }),
      server("wrong-label", { url: "http://c.example/mcp" }, "gw", { tier: "dev" }),
      server("not-listed-ns", { url: "http://d.example/mcp" }, "team-b", { tier: "prod" }),
    ];
    expect(renderAll(resources).gateways[0]?.servers.map((ref) => ref.name)).toEqual(["same-ns", "other-ns"]);
  });

  it("maps the gateway validator's problems back to the resource and its camelCase field", () => {
    expect(
      problemsOf([
        gateway(),
        server("a", { url: "http://a.example/mcp", idp: "nowhere", upstreamAuthType: "none" }),
      ]),
    ).toEqual([expect.stringMatching(/^McpServer gw\/a: spec\.idp: .*nowhere/)]);
    expect(
      problemsOf([
        gateway(),
        server("a", {
          url: "http://a.example/mcp",
          serverType: "inhouse",
          visibility: "public",
          upstreamAuthType: "none",
        }),
        server("b", { url: "http://b.example/mcp", upstreamAuthType: "none" }),
      ]),
    ).toEqual([
      expect.stringMatching(/^McpServer gw\/a: spec\.visibility: an inhouse server is always internal/),
    ]);
    expect(
      problemsOf([
        gateway(),
        idp("corp", {
          type: "directory_idp",
          issuer: "https://i.example",
          jwksUri: "https://i.example/jwks",
        }),
      ]),
    ).toEqual(["IdentityProvider gw/corp: spec.tenantId: is required for type directory_idp"]);
    expect(problemsOf([gateway({ security: { rateLimiting: { requestsPerMinute: 9000 } } })])).toEqual([
      "McpGateway gw/main: spec.security.rateLimiting.requestsPerMinute: must be a whole number from 1 to 5000 when rate limiting is enabled",
    ]);
  });

  it("accepts the default upstream OAuth and the local servers policy; a half group-sync credential is refused", () => {
    expect(
      problemsOf([
        gateway({ gatewayPolicy: { localServers: { enabled: true } } }),
        // No upstreamAuthType: the gateway's default, oauth.
        server("needs-oauth", { url: "http://a.example/mcp" }),
        idp("corp", {
          type: "hosted_idp",
          issuer: "https://i.example",
          jwksUri: "https://i.example/jwks",
          clientId: "group-sync",
        }),
      ]),
    ).toEqual([
      "IdentityProvider gw/corp: spec.clientSecret: is required with client_id/client_secret for group sync (leave both empty to turn it off)",
    ]);
  });

  it("renders where group sync reaches a provider, and the login client's secret from a Secret", () => {
    const result = renderAll([
      gateway(),
      idp("entra-gov", {
        type: "directory_idp",
        issuer: "https://login.microsoftonline.us/t1/v2.0",
        jwksUri: "https://login.microsoftonline.us/t1/discovery/v2.0/keys",
        tenantId: "t1",
        clientId: "sync",
        clientSecret: { secretKeyRef: { name: "entra", key: "sync" } },
        managementUrl: "https://dod-graph.microsoft.us",
        managementTokenUrl: "https://login.microsoftonline.us/t1/oauth2/v2.0/token",
        loginClientId: "svc-gateway-login",
        loginClientSecret: { secretKeyRef: { name: "entra", key: "login" } },
      }),
    ]);
    expect(result.problems).toEqual([]);
    const yaml = result.gateways[0]?.yaml ?? "";
    expect(yaml).toContain("management_url: https://dod-graph.microsoft.us");
    expect(yaml).toContain("management_token_url: https://login.microsoftonline.us/t1/oauth2/v2.0/token");
    expect(yaml).toContain("login_client_id: svc-gateway-login");
    expect(yaml).toMatch(/login_client_secret: \$\{SVC_SECRET_[A-Z0-9_]+\}/);
    expect(
      problemsOf([
        gateway(),
        idp("d", {
          type: "project_idp",
          projectId: "P1",
          managementTokenUrl: "https://api.descope.com/token",
        }),
      ]),
    ).toEqual([
      "IdentityProvider gw/d: spec.managementTokenUrl: is not used by project_idp (its management key needs no token); remove it",
    ]);
  });

  it("wires the OAuth server's keys and its identity-provider secret from Secrets, never into the ConfigMap", () => {
    const corp = idp("corp", {
      type: "hosted_idp",
      issuer: "https://i.example",
      jwksUri: "https://i.example/jwks",
    });
    const oauthServer = {
      idpClientId: "svc-gateway",
      idpClientSecret: { secretKeyRef: { name: "oauth", key: "idp-client-secret" } },
    };
    const oauthServerKeys = {
      signingKeys: { secretKeyRef: { name: "oauth", key: "signing-keys" } },
      kvKey: { secretKeyRef: { name: "oauth", key: "kv-key" } },
    };
    const result = renderAll([gateway({ oauthServer, oauthServerKeys }), corp]);
    expect(result.problems).toEqual([]);
    const rendered = result.gateways[0];
    expect(rendered?.yaml).toMatch(
      /oauth_server:\n {2}idp_client_id: svc-gateway\n {2}idp_client_secret: \$\{SVC_SECRET_/,
    );
    expect(rendered?.yaml).not.toMatch(/signing-keys|kv-key/);
    expect(rendered?.env).toEqual(
      expect.arrayContaining([
        {
          name: "SVC_OAUTH_SIGNING_KEYS",
          valueFrom: { secretKeyRef: { name: "oauth", key: "signing-keys" } },
        },
        { name: "SVC_OAUTH_KV_KEY", valueFrom: { secretKeyRef: { name: "oauth", key: "kv-key" } } },
        expect.objectContaining({ valueFrom: { secretKeyRef: { name: "oauth", key: "idp-client-secret" } } }),
      ]),
    );
    expect(rendered?.env.map((e) => e.name)).not.toContain("SVC_OAUTH_REGISTRATION_TOKEN");

    expect(problemsOf([gateway({ oauthServer }), corp])).toEqual([
      expect.stringMatching(/^McpGateway gw\/main: spec\.oauthServerKeys: is required with oauthServer/),
    ]);
  });

  it("wires the KV key alone for upstream OAuth, without an OAuth server; the server needs its signing keys", () => {
    const oauthServerKeys = { kvKey: { secretKeyRef: { name: "oauth", key: "kv-key" } } };
    const result = renderAll([
      gateway({ oauthServerKeys }),
      server("vendor", { url: "https://vendor.example/mcp" }),
    ]);
    expect(result.problems).toEqual([]);
    expect(result.gateways[0]?.env).toEqual(
      expect.arrayContaining([
        { name: "SVC_OAUTH_KV_KEY", valueFrom: { secretKeyRef: { name: "oauth", key: "kv-key" } } },
      ]),
    );
    expect(result.gateways[0]?.env.map((e) => e.name)).not.toContain("SVC_OAUTH_SIGNING_KEYS");
    const oauthServer = {
      idpClientId: "svc-gateway",
      idpClientSecret: { secretKeyRef: { name: "oauth", key: "idp-client-secret" } },
    };
    expect(
      problemsOf([
        gateway({ oauthServer, oauthServerKeys }),
        idp("corp", { type: "hosted_idp", issuer: "https://i.example", jwksUri: "https://i.example/jwks" }),
      ]),
    ).toEqual([
      expect.stringMatching(
        /^McpGateway gw\/main: spec\.oauthServerKeys\.signingKeys: is required with oauthServer/,
      ),
    ]);
  });

  it("renders an upstream-OAuth server: its client secret from a Secret, never into the ConfigMap", () => {
    const result = renderAll([
      gateway({ oauthServerKeys: { kvKey: { secretKeyRef: { name: "oauth", key: "kv-key" } } } }),
      server("vendor", {
        url: "https://mcp.vendor.example/mcp",
        upstreamAuthType: "oauth",
        preregisteredClientId: "svc-gateway",
        preregisteredClientSecret: { secretKeyRef: { name: "vendor-oauth", key: "client-secret" } },
        authServerUrl: "https://auth.vendor.example",
        scopesOverride: "files:read files:write",
      }),
    ]);
    expect(result.problems).toEqual([]);
    const rendered = result.gateways[0];
    expect(rendered?.yaml).toMatch(/upstream_auth_type: oauth\n/);
    expect(rendered?.yaml).toMatch(/preregistered_client_id: svc-gateway\n/);
    expect(rendered?.yaml).toMatch(/preregistered_client_secret: \$\{SVC_SECRET_[A-Z0-9_]+\}\n/);
    expect(rendered?.yaml).toMatch(/auth_server_url: https:\/\/auth\.vendor\.example\n/);
    expect(rendered?.yaml).toMatch(/scopes_override: files:read files:write\n/);
    expect(rendered?.yaml).not.toMatch(/client-secret/);
    expect(rendered?.env).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          valueFrom: { secretKeyRef: { name: "vendor-oauth", key: "client-secret" } },
        }),
      ]),
    );
  });

  it("reports duplicate server names on the resources that clash", () => {
    const problems = problemsOf([
      gateway(),
      server("a", { url: "http://a.example/mcp", name: "x" }),
      server("b", { url: "http://b.example/mcp", name: "x" }),
    ]);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join("\n")).toMatch(/McpServer gw\/b: spec\.name: .*x/);
  });

  it("refuses ${VAR} in resource values, cross-namespace secrets, and url together with deployment", () => {
    expect(
      problemsOf([gateway(), server("a", { url: "http://a.example/mcp", description: "${REDIS_URL}" })]),
    ).toEqual([
      "McpServer gw/a: spec.description: must not contain ${...}: take secrets from a Secret with secretKeyRef",
    ]);
    expect(
      problemsOf([
        gateway({ serverSelector: { namespaces: ["*"] } }),
        server(
          "a",
          {
            url: "http://a.example/mcp",
            preregisteredClientId: "i",
            preregisteredClientSecret: { secretKeyRef: { name: "s", key: "k" } },
          },
          "team",
        ),
      ]),
    ).toEqual([
      "McpServer team/a: spec.preregisteredClientSecret.secretKeyRef: the Secret must be in the gateway's namespace gw: a pod can only read Secrets of its own namespace",
    ]);
    expect(
      problemsOf([gateway(), server("a", { url: "http://a.example/mcp", deployment: { image: "x" } })]),
    ).toEqual(["McpServer gw/a: spec: set exactly one of url or deployment"]);
  });

  it("gives an api_key server its upstream key from a Secret: an env entry on the gateway, nothing in the ConfigMap", () => {
    const result = renderAll([
      gateway(),
      server("github.v2", {
        url: "https://github.example/mcp",
        upstreamAuthType: "api_key",
        upstreamApiKey: { secretKeyRef: { name: "github", key: "api-key" } },
        upstreamApiKeyHeader: "X-Api-Key",
      }),
    ]);
    expect(result.problems).toEqual([]);
    const [render] = result.gateways;
    expect(render?.env).toEqual([
      {
        name: "SVC_UPSTREAM_API_KEY_GITHUB_V2",
        valueFrom: { secretKeyRef: { name: "github", key: "api-key" } },
      },
      { name: "SVC_UPSTREAM_KEY_HEADER_GITHUB_V2", value: "X-Api-Key" },
    ]);
    expect(render?.yaml).not.toMatch(/upstream_?api_?key|github"?, key|api-key/i);
    expect(render?.yaml).toContain("upstream_auth_type: api_key");
  });

  it("refuses an upstream key without api_key, a header without a key, and a Secret in another namespace", () => {
    const key = { secretKeyRef: { name: "s", key: "k" } };
    expect(
      problemsOf([
        gateway({ serverSelector: { namespaces: ["*"] } }),
        server("a", { url: "http://a.example/mcp", upstreamAuthType: "none", upstreamApiKey: key }),
        server("b", {
          url: "http://b.example/mcp",
          upstreamAuthType: "api_key",
          upstreamApiKeyHeader: "X-Key",
        }),
        server(
          "c",
          { url: "http://c.example/mcp", upstreamAuthType: "api_key", upstreamApiKey: key },
          "team",
        ),
      ]),
    ).toEqual([
      "McpServer gw/a: spec.upstreamApiKey: upstreamApiKey needs upstreamAuthType: api_key",
      "McpServer gw/b: spec.upstreamApiKeyHeader: upstreamApiKeyHeader needs upstreamApiKey",
      "McpServer team/c: spec.upstreamApiKey.secretKeyRef: the Secret must be in the gateway's namespace gw: a pod can only read Secrets of its own namespace",
    ]);
  });

  it("renders a Deployment and a Service for a server with a deployment block, owned by it", () => {
    const result = renderAll([
      gateway(),
      server("w", { deployment: { image: "img:1", port: 9000, path: "/x/mcp" } }),
    ]);
    expect(result.gateways[0]?.serverUrls.get("w")).toBe("http://w.gw.svc:9000/x/mcp");
    const kinds = result.objects
      .filter((object) => object.metadata.name === "w")
      .map((object) => object.kind);
    expect(kinds).toEqual(["Deployment", "Service"]);
    for (const object of result.objects.filter((o) => o.metadata.name === "w")) {
      expect(object.metadata.ownerReferences?.[0]).toMatchObject({
        kind: "McpServer",
        name: "w",
        uid: "uid-w",
        controller: true,
      });
    }
  });
});
