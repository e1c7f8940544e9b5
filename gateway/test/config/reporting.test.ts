import { describe, expect, test } from "vitest";
import { ConfigError, formatProblem } from "../../src/config/index.ts";
import { problems } from "./helpers.ts";

describe("problem reporting", () => {
  const yaml = [
    'version: "1.0"', // 1
    "identity_providers:", // 2
    "  - name: corp", // 3
    "    type: hosted_idp", // 4
    "    issuer: https://corp.example.com", // 5
    "    jwks_uri: https://corp.example.com/jwks", // 6
    "    timeout: 61", // 7
    "servers:", // 8
    "  - name: one", // 9
    "    url: http://one/mcp", // 10
    "    rbac_mod: deny", // 11
    "    upstream_auth_type: none", // 12
    "  - name: one", // 13
    "    url: nope", // 14
    "    idp: okta", // 15
    "exporters:", // 16
    "  otel:", // 17
    "    - name: collector", // 18
    "",
  ].join("\n");

  test("every problem at once, in source order, with line and column", () => {
    expect(problems(yaml).map(formatProblem)).toEqual([
      "identity_providers[0].timeout (line 7:14): must be a whole number from 1 to 60 (got 61)",
      'servers[0].rbac_mod (line 11:5): unknown key (did you mean "rbac_mode"?)',
      'servers[1].name (line 13:11): duplicate server name "one" (also servers[0])',
      'servers[1].url (line 14:10): must be an http:// or https:// URL (got "nope")',
      'servers[1].idp (line 15:10): no identity provider named "okta" (known: corp)',
      "exporters.otel[0].endpoint (line 18:7): is required when the exporter is enabled",
    ]);
  });

  test("ConfigError's message is one problem per line under a heading naming the source", () => {
    const error = new ConfigError(problems(yaml), "/etc/svc-gateway/config.yaml");
    const lines = error.message.split("\n");
    expect(lines[0]).toBe("invalid gateway configuration in /etc/svc-gateway/config.yaml:");
    expect(lines).toHaveLength(7);
  });

  test("an unknown key with no close match gets no suggestion", () => {
    expect(problems('version: "1.0"\nbanana: 1\n').map(formatProblem)).toEqual([
      "banana (line 2:1): unknown key",
    ]);
  });

  test("unknown keys are found at any depth, with a suggestion from that level", () => {
    const found = problems('version: "1.0"\nsecurity:\n  rate_limiting:\n    window_secs: 30\n').map(
      formatProblem,
    );
    expect(found).toEqual([
      'security.rate_limiting.window_secs (line 4:5): unknown key (did you mean "window_seconds"?)',
    ]);
  });

  test("a YAML syntax error is located", () => {
    expect(problems('version: "1.0"\nservers: [\n').map(formatProblem)[0]).toMatch(
      /^line \d+:\d+: YAML syntax: /,
    );
  });

  test("a duplicate key in the YAML is refused", () => {
    expect(problems('version: "1.0"\nversion: "1.0"\n').map(formatProblem)[0]).toMatch(
      /YAML syntax: Map keys must be unique/,
    );
  });

  test("a document that is not a mapping is refused", () => {
    expect(problems("- a\n- b\n").map(formatProblem)).toEqual([
      "the configuration must be a mapping of keys to values",
    ]);
  });

  test("a wrong type names what was found", () => {
    expect(problems('version: "1.0"\nservers: {}\n').map((p) => p.message)).toEqual([
      "Invalid input: expected array, received object (got a mapping)",
    ]);
  });

  test("an invalid custom rule regex is reported with the engine's reason", () => {
    const found = problems(
      'version: "1.0"\ngateway_policy:\n  scrubbing:\n    custom_rules:\n      - pattern: "(unclosed"\n        method: mask\n',
    );
    expect(found.map((p) => p.path)).toEqual(["gateway_policy.scrubbing.custom_rules[0].pattern"]);
    expect(found[0]?.message).toMatch(/^is not a valid RE2 pattern \(missing closing \)/);
  });

  test("a custom rule pattern that needs backtracking is refused at load: scrubbing runs patterns in linear time", () => {
    const found = problems(
      'version: "1.0"\ngateway_policy:\n  scrubbing:\n    custom_rules:\n      - pattern: "(\\\\w+)-\\\\1"\n        method: mask\n',
    );
    expect(found.map((p) => [p.path, p.message])).toEqual([
      [
        "gateway_policy.scrubbing.custom_rules[0].pattern",
        "is not a valid RE2 pattern (invalid escape sequence: `\\1`: backreferences are not supported, matching must stay linear-time)",
      ],
    ]);
  });
});
