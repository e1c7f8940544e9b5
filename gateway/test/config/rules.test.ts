import { describe, expect, test } from "vitest";
import {
  expectValid,
  fullConfig,
  problemLines,
  specProblemLines,
  withEverySection,
  withValue,
} from "./helpers.ts";

// The configuration's validation rules: a refused case and an accepted case each, including the
// enabled/disabled conditionals.

describe("version must equal 1.0", () => {
  test.each([["2.0"], ["1"], [1], ["1.00"]])("refuses %j", (version) => {
    expect(problemLines(withValue(fullConfig(), "version", version))).toEqual([
      `version: must be "1.0" (got ${typeof version === "string" ? JSON.stringify(version) : version})`,
    ]);
  });
  test("refuses a file without version", () => {
    expect(problemLines(withValue(fullConfig(), "version", undefined))).toEqual(["version: is required"]);
  });
  test('accepts "1.0" quoted and unquoted', () => {
    expect(expectValid(fullConfig()).version).toBe("1.0");
    expect(expectValid("version: 1.0\n").version).toBe("1.0");
  });
});

describe("identity provider names are unique", () => {
  test("refuses a duplicate, naming the first", () => {
    const config = fullConfig();
    config.identity_providers.push({ ...config.identity_providers[0] });
    expect(problemLines(config)).toEqual([
      'identity_providers[1].name: duplicate identity provider name "idp" (also identity_providers[0])',
    ]);
  });
  test("accepts distinct names", () => {
    const config = fullConfig();
    config.identity_providers.push({ ...config.identity_providers[0], name: "other" });
    expect(expectValid(config).identity_providers).toHaveLength(2);
  });
});

describe("providers other than project_idp need issuer and jwks_uri", () => {
  test.each(["hosted_idp", "directory_idp"])("%s without issuer or jwks_uri is refused", (type) => {
    const config = withValue(fullConfig(), "identity_providers[0].type", type);
    withValue(config, "identity_providers[0].issuer", undefined);
    withValue(config, "identity_providers[0].jwks_uri", undefined);
    expect(problemLines(config)).toEqual([
      `identity_providers[0].issuer: is required for type ${type}`,
      `identity_providers[0].jwks_uri: is required for type ${type}`,
    ]);
  });
  test("project_idp without them is accepted and gets them derived", () => {
    const config = withValue(fullConfig(), "identity_providers[0].type", "project_idp");
    withValue(config, "identity_providers[0].issuer", undefined);
    withValue(config, "identity_providers[0].jwks_uri", undefined);
    withValue(config, "identity_providers[0].project_id", "P123");
    const [idp] = expectValid(config).identity_providers;
    expect(idp?.issuer).toBe("https://api.descope.com/v1/apps/P123");
    expect(idp?.jwks_uri).toBe("https://api.descope.com/P123/.well-known/jwks.json");
  });
  test("project_idp keeps an explicit issuer and jwks_uri", () => {
    const config = withValue(fullConfig(), "identity_providers[0].type", "project_idp");
    const [idp] = expectValid(config).identity_providers;
    expect(idp?.issuer).toBe("https://idp.example.com/");
    expect(idp?.jwks_uri).toBe("https://idp.example.com/jwks");
  });
});

describe("project_idp needs project_id", () => {
  test("refused without", () => {
    const config = withValue(fullConfig(), "identity_providers[0].type", "project_idp");
    withValue(config, "identity_providers[0].project_id", undefined);
    expect(problemLines(config)).toEqual([
      "identity_providers[0].project_id: is required for type project_idp",
    ]);
  });
  test("accepted with", () => {
    expectValid(withValue(fullConfig(), "identity_providers[0].type", "project_idp"));
  });
});

describe("directory_idp needs tenant_id", () => {
  test("refused without", () => {
    const config = withValue(fullConfig(), "identity_providers[0].type", "directory_idp");
    withValue(config, "identity_providers[0].tenant_id", undefined);
    expect(problemLines(config)).toEqual([
      "identity_providers[0].tenant_id: is required for type directory_idp",
    ]);
  });
  test("accepted with; other types do not need it", () => {
    expectValid(withValue(fullConfig(), "identity_providers[0].type", "directory_idp"));
    expectValid(withValue(fullConfig(), "identity_providers[0].tenant_id", undefined));
  });
});

describe("server names are unique", () => {
  test("refuses a duplicate", () => {
    const config = fullConfig();
    config.servers.push({ name: "srv", url: "https://other.example.com/mcp", upstream_auth_type: "none" });
    expect(problemLines(config)).toEqual(['servers[1].name: duplicate server name "srv" (also servers[0])']);
  });
  test("accepts distinct names", () => {
    const config = fullConfig();
    config.servers.push({ name: "srv2", url: "https://other.example.com/mcp", upstream_auth_type: "none" });
    expect(expectValid(config).servers.map((s) => s.name)).toEqual(["srv", "srv2"]);
  });
});

describe("a server's idp names an existing provider", () => {
  test("refuses an unknown name, listing the known ones", () => {
    expect(problemLines(withValue(fullConfig(), "servers[0].idp", "okta"))).toEqual([
      'servers[0].idp: no identity provider named "okta" (known: idp)',
    ]);
  });
  test("says when there are none", () => {
    const config = withValue(fullConfig(), "identity_providers", []);
    expect(problemLines(withValue(config, "servers[0].idp", "okta"))).toEqual([
      'servers[0].idp: no identity provider named "okta" (none are configured)',
    ]);
  });
  test("accepts a known name", () => {
    expect(expectValid(withValue(fullConfig(), "servers[0].idp", "idp")).servers[0]?.idp).toBe("idp");
  });
});

describe("a server url is a valid URL", () => {
  test.each(["not a url", "ftp://example.com/mcp", "example.com/mcp", ""])("refuses %j", (url) => {
    expect(problemLines(withValue(fullConfig(), "servers[0].url", url))).toEqual([
      `servers[0].url: must be an http:// or https:// URL (got ${JSON.stringify(url)})`,
    ]);
  });
  test.each(["http://127.0.0.1:8080/mcp", "https://mcp.example.com/v1/mcp"])("accepts %s", (url) => {
    expect(expectValid(withValue(fullConfig(), "servers[0].url", url)).servers[0]?.url).toBe(url);
  });
});

describe("rbac_mode agrees where both levels enable RBAC", () => {
  const gatewayRbac = (enabled: boolean, mode: string) =>
    withValue(fullConfig(), "gateway_policy.server_rbac", { rbac_enabled: enabled, rbac_mode: mode });

  test("gateway allow + server deny, both enabled: refused", () => {
    const config = withValue(gatewayRbac(true, "allow"), "servers[0].rbac_enabled", true);
    withValue(config, "servers[0].rbac_mode", "deny");
    expect(problemLines(config)).toEqual([
      "servers[0].rbac_mode: is deny but gateway_policy.server_rbac.rbac_mode is allow; allow and deny cannot be mixed across levels",
    ]);
  });
  test("a server inheriting rbac_enabled from the gateway must agree too", () => {
    const config = withValue(gatewayRbac(true, "deny"), "servers[0].rbac_mode", "allow");
    expect(problemLines(config)).toHaveLength(1);
  });
  test("gateway RBAC off: the server may use either mode", () => {
    const config = withValue(gatewayRbac(false, "allow"), "servers[0].rbac_enabled", true);
    expect(expectValid(withValue(config, "servers[0].rbac_mode", "deny")).servers[0]?.rbac_mode).toBe("deny");
  });
  test("server RBAC off: its mode does not matter", () => {
    const config = withValue(gatewayRbac(true, "allow"), "servers[0].rbac_enabled", false);
    expectValid(withValue(config, "servers[0].rbac_mode", "deny"));
  });
  test("same mode on both levels: accepted, and the server inherits the gateway's defaults", () => {
    const config = withValue(fullConfig(), "gateway_policy.server_rbac", {
      rbac_enabled: true,
      rbac_mode: "deny",
      denied_groups: ["contractors"],
      capability_rbac_enabled: true,
    });
    const [server] = expectValid(config).servers;
    expect(server).toMatchObject({
      rbac_enabled: true,
      rbac_mode: "deny",
      allowed_groups: [],
      denied_groups: ["contractors"],
      capability_rbac_enabled: true,
    });
  });
  test("a capability override cannot mix modes with its server", () => {
    const config = withValue(fullConfig(), "servers[0].rbac_enabled", true);
    withValue(config, "servers[0].capability_overrides", [{ capability: "tools/x", rbac_mode: "deny" }]);
    expect(problemLines(config)).toEqual([
      "servers[0].capability_overrides[0].rbac_mode: is deny but the server's rbac_mode is allow; allow and deny cannot be mixed across levels",
    ]);
    withValue(config, "servers[0].capability_overrides[0].rbac_enabled", false);
    expectValid(config);
  });
});

describe("exporter names are unique within a type", () => {
  test.each(["search_index", "otel", "siem"])("a duplicate %s name is refused", (type) => {
    const config = fullConfig();
    config.exporters[type].push({ ...config.exporters[type][0] });
    expect(problemLines(config)).toEqual([
      `exporters.${type}[1].name: duplicate ${type} exporter name "${config.exporters[type][0].name}" (also exporters.${type}[0])`,
    ]);
  });
  test("the same name in different types is accepted", () => {
    const config = fullConfig();
    for (const type of ["search_index", "otel", "siem"]) config.exporters[type][0].name = "audit";
    expectValid(config);
  });
});

describe("search-index exporters use url or cloud_id, not both", () => {
  test("both is refused", () => {
    const config = withValue(withEverySection(), "exporters.search_index[0].cloud_id", "deployment:abc");
    expect(specProblemLines(config)).toEqual([
      "exporters.search_index[0].cloud_id: use url or cloud_id, not both",
    ]);
  });
  test("both is refused even when disabled", () => {
    const config = withValue(withEverySection(), "exporters.search_index[0].cloud_id", "deployment:abc");
    expect(specProblemLines(withValue(config, "exporters.search_index[0].enabled", false))).toHaveLength(1);
  });
  test("either one alone is accepted", () => {
    expect(specProblemLines(withEverySection())).toEqual([]);
    const config = withValue(withEverySection(), "exporters.search_index[0].url", undefined);
    expect(
      specProblemLines(withValue(config, "exporters.search_index[0].cloud_id", "deployment:abc")),
    ).toEqual([]);
  });
  test("neither: refused when enabled, accepted when disabled", () => {
    const config = withValue(withEverySection(), "exporters.search_index[0].url", undefined);
    expect(specProblemLines(config)).toEqual([
      "exporters.search_index[0].url: url or cloud_id is required when the exporter is enabled",
    ]);
    expect(specProblemLines(withValue(config, "exporters.search_index[0].enabled", false))).toEqual([]);
  });
});

describe("the OTEL endpoint is required when enabled", () => {
  test("enabled without endpoint is refused", () => {
    expect(specProblemLines(withValue(withEverySection(), "exporters.otel[0].endpoint", undefined))).toEqual([
      "exporters.otel[0].endpoint: is required when the exporter is enabled",
    ]);
  });
  test("disabled without endpoint is accepted", () => {
    const config = withValue(withEverySection(), "exporters.otel[0].endpoint", undefined);
    expect(specProblemLines(withValue(config, "exporters.otel[0].enabled", false))).toEqual([]);
  });
});

describe("every SIEM field is required when enabled", () => {
  const fields = ["dcr_immutable_id", "dcr_endpoint", "tenant_id", "client_id", "client_secret"];
  test.each(fields)("enabled without %s is refused", (field) => {
    expect(specProblemLines(withValue(withEverySection(), `exporters.siem[0].${field}`, undefined))).toEqual([
      `exporters.siem[0].${field}: is required when the exporter is enabled`,
    ]);
  });
  test("disabled with none of them is accepted", () => {
    expect(
      specProblemLines(withValue(withEverySection(), "exporters.siem", [{ name: "siem", enabled: false }])),
    ).toEqual([]);
  });
  test("dcr_endpoint must be https", () => {
    expect(
      specProblemLines(
        withValue(withEverySection(), "exporters.siem[0].dcr_endpoint", "http://dce.example.com"),
      ),
    ).toEqual(['exporters.siem[0].dcr_endpoint: must be an https:// URL (got "http://dce.example.com")']);
  });
});

describe("rate-limit ranges apply when rate limiting is enabled", () => {
  test.each([
    ["requests_per_minute", 0, "1 to 5000"],
    ["requests_per_minute", 5001, "1 to 5000"],
    ["window_seconds", 9, "10 to 300"],
    ["window_seconds", 301, "10 to 300"],
  ])("enabled with %s %i is refused", (field, value, range) => {
    expect(problemLines(withValue(fullConfig(), `security.rate_limiting.${field}`, value))).toEqual([
      `security.rate_limiting.${field}: must be a whole number from ${range} when rate limiting is enabled`,
    ]);
  });
  test("disabled with out-of-range numbers is accepted", () => {
    const config = withValue(fullConfig(), "security.rate_limiting", {
      enabled: false,
      requests_per_minute: 0,
      window_seconds: 100000,
    });
    expect(expectValid(config).security.rate_limiting).toEqual({
      enabled: false,
      requests_per_minute: 0,
      window_seconds: 100000,
    });
  });
  test("disabled still needs whole numbers", () => {
    const config = withValue(fullConfig(), "security.rate_limiting", {
      enabled: false,
      requests_per_minute: 1.5,
    });
    expect(problemLines(config)).toEqual([
      "security.rate_limiting.requests_per_minute: must be a whole number (got 1.5)",
    ]);
  });
});

describe("control_plane requires url, api_key and gateway_id", () => {
  test.each(["url", "api_key", "gateway_id"])("refused without %s", (field) => {
    expect(specProblemLines(withValue(withEverySection(), `control_plane.${field}`, undefined))).toEqual([
      `control_plane.${field}: is required`,
    ]);
  });
  test("gateway_id must be a UUID", () => {
    expect(specProblemLines(withValue(withEverySection(), "control_plane.gateway_id", "gw-1"))).toEqual([
      'control_plane.gateway_id: must be a UUID (got "gw-1")',
    ]);
  });
  test("accepted with all three", () => {
    expect(specProblemLines(withEverySection())).toEqual([]);
  });
});
