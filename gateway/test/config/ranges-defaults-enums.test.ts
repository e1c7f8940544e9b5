import { describe, expect, test } from "vitest";
import {
  expectValid,
  fullConfig,
  parsedBySchema,
  problemLines,
  specProblemLines,
  type Tree,
  withEverySection,
  withValue,
} from "./helpers.ts";

// Every range in the field tables (README "Configuration reference"), at min-1, min, max and max+1. Ranges of sections this version
// refuses as a whole (control_plane, oauth_server) are still checked: specProblemLines.
const NUMBER_RANGES: [path: string, min: number, max: number][] = [
  ["control_plane.timeout", 5, 120],
  ["control_plane.cache_ttl", 60, 3600],
  ["identity_providers[0].timeout", 1, 60],
  ["security.rate_limiting.requests_per_minute", 1, 5000],
  ["security.rate_limiting.window_seconds", 10, 300],
  ["oauth_server.token_ttl", 300, 86400],
  ["oauth_server.refresh_token_ttl", 3600, 2592000],
  ["oauth_server.authorization_code_ttl", 30, 600],
  ["exporters.search_index[0].timeout", 5, 120],
  ["exporters.otel[0].timeout", 5, 120],
  ["exporters.siem[0].timeout", 5, 120],
];

const NAME_FIELDS = [
  "servers[0].name",
  "identity_providers[0].name",
  "exporters.search_index[0].name",
  "exporters.otel[0].name",
  "exporters.siem[0].name",
];

describe("number ranges", () => {
  describe.each(NUMBER_RANGES)("%s (%i-%i)", (path, min, max) => {
    test.each([min, max])("accepts %i", (value) => {
      expect(specProblemLines(withValue(withEverySection(), path, value))).toEqual([]);
    });
    test.each([min - 1, max + 1])("refuses %i, naming the range", (value) => {
      const [line] = specProblemLines(withValue(withEverySection(), path, value));
      expect(line).toMatch(new RegExp(`^${escapeRegex(path)}: must be a whole number from ${min} to ${max}`));
    });
    test("refuses a fraction and a string", () => {
      expect(specProblemLines(withValue(withEverySection(), path, min + 0.5))).toHaveLength(1);
      expect(specProblemLines(withValue(withEverySection(), path, String(min)))).toHaveLength(1);
    });
  });
});

describe("name lengths 1-255", () => {
  describe.each(NAME_FIELDS)("%s", (path) => {
    test.each([1, 255])("accepts %i characters", (length) => {
      expectValid(withValue(fullConfig(), path, "n".repeat(length)));
    });
    test("refuses 0 characters", () => {
      expect(problemLines(withValue(fullConfig(), path, ""))).toEqual([`${path}: must not be empty`]);
    });
    test("refuses 256 characters", () => {
      expect(problemLines(withValue(fullConfig(), path, "n".repeat(256)))).toEqual([
        `${path}: must be at most 255 characters`,
      ]);
    });
  });
  test("a server name cannot hold '/' or spaces: it is a path segment", () => {
    expect(problemLines(withValue(fullConfig(), "servers[0].name", "a/b"))).toEqual([
      "servers[0].name: must not contain '/' or white space: it is the path segment in /{name}/mcp (got \"a/b\")",
    ]);
  });
});

describe("every default is applied", () => {
  test("root sections", () => {
    const config = expectValid({ version: "1.0" });
    expect(config).toEqual({
      version: "1.0",
      identity_providers: [],
      servers: [],
      gateway_policy: {
        scrubbing: {
          enabled: false,
          sensitive_fields: [],
          whitelist_fields: [],
          custom_rules: [],
          recognizers: [],
        },
        firewall: {
          enabled: false,
          mode: "block",
          requests: ["tools/call", "prompts/get", "completion/complete"],
          responses: ["tools/call", "resources/read", "prompts/get", "sampling/createMessage"],
          request_threshold: 0.5,
          response_threshold: 0.5,
          allow_tools: [],
          allow_fields: [],
          detectors: [{ type: "builtin" }],
          max_text_chars: 1_048_576,
          spotlighting: false,
        },
        server_rbac: {
          rbac_enabled: false,
          rbac_mode: "allow",
          allowed_groups: [],
          denied_groups: [],
          capability_rbac_enabled: false,
          deny_requires_groups: true,
        },
        capability_rbac: {
          read_only: { default_groups: [] },
          destructive: { default_groups: [] },
          unspecified: { default_groups: [] },
        },
        local_servers: { enabled: false, mode: "allow", groups: null },
      },
      security: {
        replay_protection: { enabled: true },
        rate_limiting: { enabled: true, requests_per_minute: 1000, window_seconds: 60 },
      },
      exporters: { search_index: [], otel: [], siem: [] },
    });
  });

  test("control_plane, identity provider, oauth_server and exporters", () => {
    const config = parsedBySchema(withEverySection());
    expect(config.control_plane).toEqual({
      url: "https://cp.example.com",
      api_key: "key",
      gateway_id: "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
      timeout: 30,
      cache_ttl: 300,
    });
    expect(config.identity_providers[0]).toMatchObject({ api_identifiers: [], timeout: 10 });
    expect(config.oauth_server).toEqual({
      idp_client_id: "gateway",
      idp_client_secret: "secret",
      token_ttl: 3600,
      refresh_token_ttl: 604800,
      authorization_code_ttl: 60,
      registration: {
        enabled: true,
        client_credentials: false,
        unused_client_ttl: 86400,
        redirect_uri_schemes: [],
      },
      client_id_metadata_documents: { enabled: true, trusted_origins: [] },
      consent: { known_clients: [] },
    });
    expect(config.exporters.search_index[0]).toEqual({
      name: "es",
      url: "https://es.example.com",
      enabled: true,
      index_prefix: "svc-gateway",
      timeout: 30,
    });
    expect(config.exporters.otel[0]).toEqual({
      name: "otel",
      endpoint: "http://collector:4317",
      enabled: true,
      protocol: "grpc",
      service_name: "svc-gateway",
      timeout: 30,
      export_logs: true,
      export_metrics: false,
      export_traces: false,
      headers: {},
    });
    expect(config.exporters.siem[0]).toMatchObject({
      enabled: true,
      dcr_stream_name: "Custom-SvcGateway_CL",
      timeout: 30,
    });
  });

  test("server fields, with RBAC defaults from gateway_policy.server_rbac", () => {
    // upstream_auth_type defaults to oauth.
    const [server] = parsedBySchema(
      withValue(fullConfig(), "servers[0].upstream_auth_type", undefined),
    ).servers;
    expect(server).toEqual({
      name: "srv",
      url: "https://upstream.example.com/mcp",
      description: "",
      server_type: "third_party",
      enabled: true,
      visibility: "third_party",
      upstream_auth_type: "oauth",
      session_affinity: true,
      rbac_enabled: false,
      rbac_mode: "allow",
      allowed_groups: [],
      denied_groups: [],
      rbac_audit: true,
      capability_rbac_enabled: false,
      capability_overrides: [],
    });
  });

  test("capability override, custom rule, recognizer and per-server scrubbing policy", () => {
    const config = withValue(fullConfig(), "servers[0].capability_overrides", [{ capability: "tools/*" }]);
    withValue(config, "servers[0].security", { recognizers: [{ entity_type: "EMAIL_ADDRESS" }] });
    const [server] = expectValid(config).servers;
    expect(server?.capability_overrides).toEqual([
      {
        capability: "tools/*",
        rbac_enabled: true,
        rbac_mode: "allow",
        allowed_groups: [],
        denied_groups: [],
      },
    ]);
    expect(server?.security).toEqual({
      enabled: false,
      sensitive_fields: [],
      whitelist_fields: [],
      custom_rules: [],
      recognizers: [{ entity_type: "EMAIL_ADDRESS", enabled: true }],
    });
  });

  test("oauth_server absent means the gateway's own OAuth server is off", () => {
    expect(expectValid({ version: "1.0" }).oauth_server).toBeUndefined();
    expect(parsedBySchema({ version: "1.0", oauth_server: {} }).oauth_server?.token_ttl).toBe(3600);
  });

  test("server_type inhouse derives visibility internal; an explicit other visibility is refused", () => {
    const config = withValue(fullConfig(), "servers[0].server_type", "inhouse");
    expect(expectValid(config).servers[0]?.visibility).toBe("internal");
    expect(problemLines(withValue(config, "servers[0].visibility", "public"))).toEqual([
      "servers[0].visibility: an inhouse server is always internal; remove visibility or set it to internal (was public)",
    ]);
  });
});

// Every enum: each value accepted and read back; anything else refused with the list of allowed values.
const ENUMS: [path: string, values: string[]][] = [
  ["identity_providers[0].type", ["hosted_idp", "directory_idp", "project_idp"]],
  ["servers[0].server_type", ["inhouse", "third_party"]],
  ["servers[0].visibility", ["third_party", "internal", "public"]],
  ["servers[0].upstream_auth_type", ["oauth", "none", "api_key"]],
  ["servers[0].rbac_mode", ["allow", "deny"]],
  ["servers[0].capability_overrides[0].rbac_mode", ["allow", "deny"]],
  ["gateway_policy.server_rbac.rbac_mode", ["allow", "deny"]],
  ["gateway_policy.local_servers.mode", ["allow", "deny"]],
  ["gateway_policy.scrubbing.custom_rules[0].method", ["mask", "remove", "hash", "replace"]],
  ["exporters.otel[0].protocol", ["grpc", "http/protobuf", "http/json"]],
];

describe("enums", () => {
  const base = () => withValue(fullConfig(), "servers[0].capability_overrides", [{ capability: "tools/x" }]);
  describe.each(ENUMS)("%s", (path, values) => {
    test.each(values)("accepts %s", (value) => {
      const config = withValue(base(), path, value);
      // inhouse only goes with visibility internal, which is what it derives.
      expect(specProblemLines(config)).toEqual([]);
      expect(readPath(parsedBySchema(config), path)).toBe(value);
    });
    test("refuses anything else, listing the values", () => {
      expect(problemLines(withValue(base(), path, "bogus"))).toEqual([
        `${path}: must be one of: ${values.join(", ")} (got "bogus")`,
      ]);
    });
  });
});

function readPath(value: unknown, path: string): unknown {
  return path
    .split(/\.|(?=\[)/)
    .map((s) => (s.startsWith("[") ? Number(s.slice(1, -1)) : s))
    .reduce<Tree | undefined>((node, segment) => node?.[segment], value as Tree);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

describe("capability override patterns", () => {
  test("a pattern no request could spell is refused, naming why: its restriction would silently not exist", () => {
    const config = withValue(fullConfig(), "servers[0].capability_overrides", [
      { capability: "tools/delete_repo " },
      { capability: "resources/file:///etc/\u0000" },
      { capability: "prompts/\u200Bsecret" },
      { capability: "resources/file:///logs/{date}" },
      { capability: "tools/admin_*" },
    ]);
    expect(problemLines(config)).toEqual([
      "servers[0].capability_overrides[0].capability: the name ends with white space (U+0020): it could never match",
      "servers[0].capability_overrides[1].capability: the name contains a control character (U+0000) at index 12: it could never match",
      "servers[0].capability_overrides[2].capability: the name contains a format character (U+200B) at index 0: it could never match",
    ]);
  });
});
