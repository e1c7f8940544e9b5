import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { type GatewayConfig, type ServerConfig, validateConfigText } from "../../src/config/index.ts";
import { capabilityOfRequest } from "../../src/rbac/capability.ts";
import { decide, type ToolHints } from "../../src/rbac/decide.ts";
import { filterListResult } from "../../src/rbac/filter-list.ts";

// The RBAC matrix, on configurations parsed by the real schema (so defaults and derivations are the real ones).

function configWith(
  server: Record<string, unknown>,
  gatewayPolicy: Record<string, unknown> = {},
): GatewayConfig {
  const result = validateConfigText(
    stringify({
      version: "1.0",
      servers: [{ name: "s", url: "http://127.0.0.1:1/mcp", upstream_auth_type: "none", ...server }],
      gateway_policy: gatewayPolicy,
    }),
    { env: {} },
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

function firstServer(config: GatewayConfig): ServerConfig {
  const [server] = config.servers;
  if (server === undefined) throw new Error("the test config has no server");
  return server;
}

function allowed(config: GatewayConfig, groups: string[], capability?: string, hints?: ToolHints): boolean {
  const [kind, ...rest] = (capability ?? "").split("/");
  const target = capability === undefined ? undefined : { kind: kind as "tools", name: rest.join("/") };
  return decide(firstServer(config), config.gateway_policy, groups, target, hints).allowed;
}

describe("server level", () => {
  test("RBAC off: everyone", () => {
    expect(allowed(configWith({}), [])).toBe(true);
  });
  test("allow mode admits only allowed groups", () => {
    const config = configWith({ rbac_enabled: true, rbac_mode: "allow", allowed_groups: ["eng"] });
    expect(allowed(config, ["eng", "x"])).toBe(true);
    expect(allowed(config, ["sales"])).toBe(false);
    expect(allowed(config, [])).toBe(false);
  });
  test("deny mode refuses denied groups, and callers with no group at all", () => {
    const config = configWith({ rbac_enabled: true, rbac_mode: "deny", denied_groups: ["contractors"] });
    expect(allowed(config, ["eng"])).toBe(true);
    expect(allowed(config, ["eng", "contractors"])).toBe(false);
    const none = decide(firstServer(config), config.gateway_policy, []);
    expect(none.allowed).toBe(false);
    expect(none.reason).toMatch(/no groups/);
  });
  test("deny mode admits callers with no group where the operator says so (deny_requires_groups: false)", () => {
    const config = configWith(
      { rbac_enabled: true, rbac_mode: "deny", denied_groups: ["contractors"] },
      { server_rbac: { deny_requires_groups: false } },
    );
    expect(allowed(config, [])).toBe(true);
    expect(allowed(config, ["contractors"])).toBe(false);
  });
  test("a deny-mode override refuses callers with no group too", () => {
    const config = configWith({
      capability_rbac_enabled: true,
      capability_overrides: [
        { capability: "tools/drop_table", rbac_mode: "deny", denied_groups: ["interns"] },
      ],
    });
    expect(allowed(config, [], "tools/drop_table")).toBe(false);
    expect(allowed(config, ["eng"], "tools/drop_table")).toBe(true);
    expect(allowed(config, [], "tools/select")).toBe(true);
  });
  test("gateway_policy.server_rbac provides the defaults", () => {
    const config = configWith({}, { server_rbac: { rbac_enabled: true, allowed_groups: ["staff"] } });
    expect(allowed(config, ["staff"])).toBe(true);
    expect(allowed(config, ["guest"])).toBe(false);
  });
  test("the decision names the rule and the group, for the audit log", () => {
    const config = configWith({ rbac_enabled: true, allowed_groups: ["eng"] });
    expect(decide(firstServer(config), config.gateway_policy, ["eng"])).toEqual({
      allowed: true,
      rule: "server",
      reason: "server s: admitted",
    });
    expect(decide(firstServer(config), config.gateway_policy, ["x"])).toMatchObject({
      allowed: false,
      rule: "server",
      reason: "server s: not in an allowed group",
    });
  });
});

describe("capability level", () => {
  const overrides = [
    { capability: "tools/*", allowed_groups: ["eng"] },
    { capability: "tools/deploy", allowed_groups: ["release"] },
    { capability: "tools/lint", rbac_enabled: false },
    { capability: "resources/file:///logs/{date}", allowed_groups: ["sre"] },
    { capability: "resources/file:///secrets/*", allowed_groups: ["security"] },
    { capability: "prompts/incident", allowed_groups: ["sre"] },
  ];
  const config = configWith({ capability_rbac_enabled: true, capability_overrides: overrides });

  test("an exact override wins over the wildcard", () => {
    expect(allowed(config, ["release"], "tools/deploy")).toBe(true);
    expect(allowed(config, ["eng"], "tools/deploy")).toBe(false);
  });
  test("the kind wildcard covers the rest", () => {
    expect(allowed(config, ["eng"], "tools/search")).toBe(true);
    expect(allowed(config, ["release"], "tools/search")).toBe(false);
  });
  test("an override with RBAC off admits everyone the server admits", () => {
    expect(allowed(config, [], "tools/lint")).toBe(true);
  });
  test("resource templates match one path segment per variable", () => {
    expect(allowed(config, ["sre"], "resources/file:///logs/2026-11-20")).toBe(true);
    expect(allowed(config, ["eng"], "resources/file:///logs/2026-11-20")).toBe(false);
    expect(allowed(config, ["eng"], "resources/file:///logs/a/b")).toBe(true); // not the template: no rule
  });
  test("a trailing * matches a prefix", () => {
    expect(allowed(config, ["security"], "resources/file:///secrets/db/password")).toBe(true);
    expect(allowed(config, ["sre"], "resources/file:///secrets/db/password")).toBe(false);
  });
  test("prompts are matched by name", () => {
    expect(allowed(config, ["sre"], "prompts/incident")).toBe(true);
    expect(allowed(config, ["eng"], "prompts/incident")).toBe(false);
    expect(allowed(config, ["eng"], "prompts/other")).toBe(true);
  });
  test("overrides are ignored unless capability_rbac_enabled", () => {
    const off = configWith({ capability_rbac_enabled: false, capability_overrides: overrides });
    expect(allowed(off, [], "tools/deploy")).toBe(true);
  });
  test("a deny-mode override refuses its denied groups", () => {
    const deny = configWith({
      rbac_enabled: true,
      rbac_mode: "deny",
      capability_rbac_enabled: true,
      capability_overrides: [
        { capability: "tools/drop_table", rbac_mode: "deny", denied_groups: ["interns"] },
      ],
    });
    expect(allowed(deny, ["interns"], "tools/drop_table")).toBe(false);
    expect(allowed(deny, ["interns"], "tools/select")).toBe(true);
  });
});

describe("layers only restrict", () => {
  test("an override cannot admit a user the server refuses", () => {
    const config = configWith({
      rbac_enabled: true,
      allowed_groups: ["eng"],
      capability_rbac_enabled: true,
      capability_overrides: [{ capability: "tools/open", allowed_groups: ["guest"] }],
    });
    expect(allowed(config, ["guest"], "tools/open")).toBe(false);
    expect(allowed(config, ["eng", "guest"], "tools/open")).toBe(true);
    expect(allowed(config, ["eng"], "tools/open")).toBe(false);
  });
});

describe("default groups by tool annotation", () => {
  const policy = {
    capability_rbac: {
      read_only: { default_groups: ["viewer", "editor"] },
      destructive: { default_groups: ["admin"] },
      unspecified: { default_groups: ["editor"] },
    },
  };
  const config = configWith(
    {
      capability_rbac_enabled: true,
      capability_overrides: [{ capability: "tools/pinned", allowed_groups: ["viewer"] }],
    },
    policy,
  );

  test.each([
    [{ readOnlyHint: true }, ["viewer"], true],
    [{ readOnlyHint: true }, ["nobody"], false],
    [{ destructiveHint: true }, ["editor"], false],
    [{ destructiveHint: true }, ["admin"], true],
    [{ readOnlyHint: true, destructiveHint: true }, ["viewer"], false], // destructive wins: the safer reading
    [{}, ["editor"], true],
    [{}, ["viewer"], false],
  ])("hints %j, groups %j → %s", (hints, groups, expected) => {
    expect(allowed(config, groups, "tools/any", hints)).toBe(expected);
  });
  test("an override wins over the annotation default", () => {
    expect(allowed(config, ["viewer"], "tools/pinned", { destructiveHint: true })).toBe(true);
  });
  test("empty default groups restrict nothing", () => {
    const open = configWith({ capability_rbac_enabled: true });
    expect(allowed(open, [], "tools/any", { destructiveHint: true })).toBe(true);
  });
});

describe("list filtering uses the same decision", () => {
  const config = configWith({
    capability_rbac_enabled: true,
    capability_overrides: [
      { capability: "tools/deploy", allowed_groups: ["release"] },
      { capability: "prompts/secret", allowed_groups: ["release"] },
      { capability: "resources/file:///private/*", allowed_groups: ["release"] },
    ],
  });
  const check =
    (groups: string[]) =>
    (capability: { kind: "tools" | "prompts" | "resources"; name: string }, hints?: ToolHints) =>
      decide(firstServer(config), config.gateway_policy, groups, capability, hints).allowed;

  test.each([
    [
      "tools/list",
      { tools: [{ name: "deploy" }, { name: "search" }, { nameless: true }] },
      { tools: [{ name: "search" }] },
    ],
    ["prompts/list", { prompts: [{ name: "secret" }, { name: "hello" }] }, { prompts: [{ name: "hello" }] }],
    [
      "resources/list",
      { resources: [{ uri: "file:///private/a" }, { uri: "file:///public/b" }] },
      { resources: [{ uri: "file:///public/b" }] },
    ],
    [
      "resources/templates/list",
      {
        resourceTemplates: [{ uriTemplate: "file:///private/{id}" }, { uriTemplate: "file:///public/{id}" }],
        nextCursor: "c",
      },
      { resourceTemplates: [{ uriTemplate: "file:///public/{id}" }], nextCursor: "c" },
    ],
  ] as const)("%s hides what the caller may not use", (method, result, expected) => {
    expect(filterListResult(method, result, check(["eng"]))).toEqual(expected);
  });

  test("nothing removed: the same object comes back", () => {
    const result = { tools: [{ name: "deploy" }, { name: "search" }] };
    expect(filterListResult("tools/list", result, check(["release"]))).toBe(result);
  });
});

describe("capabilityOfRequest", () => {
  const named = (kind: string, name: string, field: string) => ({
    status: "named",
    capability: { kind, name },
    field,
  });
  test.each([
    ["tools/call", { name: "x", arguments: {} }, named("tools", "x", "params.name")],
    ["prompts/get", { name: "p" }, named("prompts", "p", "params.name")],
    ["resources/read", { uri: "file:///a" }, named("resources", "file:///a", "params.uri")],
    ["resources/subscribe", { uri: "file:///a" }, named("resources", "file:///a", "params.uri")],
    ["resources/unsubscribe", { uri: "file:///a" }, named("resources", "file:///a", "params.uri")],
    [
      "completion/complete",
      { ref: { type: "ref/prompt", name: "p" }, argument: { name: "a", value: "" } },
      named("prompts", "p", "params.ref.name"),
    ],
    [
      "completion/complete",
      { ref: { type: "ref/resource", uri: "file:///{x}" }, argument: { name: "x", value: "" } },
      named("resources", "file:///{x}", "params.ref.uri"),
    ],
    ["tools/call", {}, { status: "missing", problem: "tools/call: params.name is missing" }],
    ["tools/call", { name: 7 }, { status: "missing", problem: "tools/call: params.name is not a string" }],
    ["resources/read", { uri: "" }, { status: "missing", problem: "resources/read: params.uri is empty" }],
    [
      "completion/complete",
      { ref: { type: "ref/other", name: "p" } },
      {
        status: "missing",
        problem: 'completion/complete: params.ref.type must be "ref/prompt" or "ref/resource"',
      },
    ],
    ["initialize", {}, { status: "none" }],
    ["tools/list", {}, { status: "none" }],
  ])("%s %j", (method, params, expected) => {
    expect(capabilityOfRequest(method, params)).toEqual(expected);
  });
});
