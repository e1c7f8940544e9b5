import { describe, expect, test } from "vitest";
import { validateConfigText } from "../../src/config/index.ts";
import { interpolateString } from "../../src/config/interpolate.ts";
import { expectValid, problems } from "./helpers.ts";

describe("interpolateString", () => {
  test("substitutes a set variable, several times and among text", () => {
    expect(interpolateString("https://${HOST}:${PORT}/${HOST}", { HOST: "h", PORT: "1" }).value).toBe(
      "https://h:1/h",
    );
  });
  test("an unset variable is a problem naming it", () => {
    expect(interpolateString("${MISSING}", {}).problems).toEqual([
      "environment variable MISSING is not set (write ${MISSING:default} to make it optional)",
    ]);
  });
  test("a default is used only when the variable is unset", () => {
    expect(interpolateString("${X:fallback}", {}).value).toBe("fallback");
    expect(interpolateString("${X:fallback}", { X: "set" }).value).toBe("set");
    expect(interpolateString("${X:fallback}", { X: "" }).value).toBe("");
  });
  test("an empty default is allowed, and a default may hold colons", () => {
    expect(interpolateString("a${X:}b", {})).toMatchObject({ value: "ab", problems: [] });
    expect(interpolateString("${URL:http://localhost:8080}", {}).value).toBe("http://localhost:8080");
  });
  test("$${ writes a literal ${", () => {
    expect(interpolateString("price $${AMOUNT} and ${X}", { X: "x", AMOUNT: "9" })).toMatchObject({
      value: "price ${AMOUNT} and x",
      problems: [],
    });
    expect(interpolateString("$${", {}).value).toBe("${");
  });
  test("text without references is returned as it is", () => {
    expect(interpolateString("a $b {c} $", {})).toEqual({
      value: "a $b {c} $",
      substituted: false,
      problems: [],
    });
  });
  test("an unterminated reference or a bad name is a problem", () => {
    expect(interpolateString("${OPEN", {}).problems[0]).toMatch(/unterminated/);
    expect(interpolateString("${1BAD}", {}).problems[0]).toMatch(/not a valid reference/);
    expect(interpolateString("${}", {}).problems[0]).toMatch(/not a valid reference/);
  });
  test("keepUnsetVariables leaves unset references as written", () => {
    expect(interpolateString("Bearer ${TOKEN}", {}, true)).toMatchObject({
      value: "Bearer ${TOKEN}",
      problems: [],
    });
  });
});

describe("interpolation in a configuration file", () => {
  const yaml = `
version: "1.0"
servers:
  - name: \${SERVER_NAME}
    url: \${UPSTREAM:http://127.0.0.1:9000/mcp}
    allowed_groups:
      - \${GROUP_A}
      - "\${GROUP_B:b}"
      - plain
    security:
      sensitive_fields: ["\${FIELD}"]
      custom_rules:
        - pattern: "secret-[0-9]+"
          method: replace
          replacement: "literal $\${KEEP}"
    description: \${DESCRIPTION:}
    upstream_auth_type: none
security:
  rate_limiting:
    requests_per_minute: \${RPM:100}
    enabled: \${LIMITS_ON:true}
`;
  const env = { SERVER_NAME: "github", GROUP_A: "a", FIELD: "password" };

  test("in values, lists and nested objects; typed where unquoted", () => {
    const config = expectValid(yaml, env);
    const [server] = config.servers;
    expect(server?.name).toBe("github");
    expect(server?.url).toBe("http://127.0.0.1:9000/mcp");
    expect(server?.allowed_groups).toEqual(["a", "b", "plain"]);
    expect(server?.security?.sensitive_fields).toEqual(["password"]);
    expect(server?.security?.custom_rules[0]).toEqual({
      pattern: "secret-[0-9]+",
      method: "replace",
      replacement: "literal ${KEEP}",
    });
    expect(server?.description).toBe("");
    expect(config.security.rate_limiting).toEqual({
      enabled: true,
      requests_per_minute: 100,
      window_seconds: 60,
    });
  });

  test("an unset variable fails loading, naming the variable and the field, at its line", () => {
    expect(problems(yaml, { SERVER_NAME: "github", FIELD: "password" })).toEqual([
      {
        path: "servers[0].allowed_groups[0]",
        message: "environment variable GROUP_A is not set (write ${GROUP_A:default} to make it optional)",
        line: 7,
        column: 9,
      },
    ]);
  });

  test("a quoted reference stays a string, so a number field refuses it", () => {
    const result = validateConfigText(
      'version: "1.0"\nsecurity:\n  rate_limiting:\n    window_seconds: "${T:30}"\n',
      { env: {} },
    );
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problems[0]?.message).toBe('must be a whole number (got "30")');
  });

  test("keys are never interpolated", () => {
    const lines = problems('version: "1.0"\n${KEY}: 1\n', { KEY: "servers" }).map((p) => p.path);
    expect(lines).toEqual(['["${KEY}"]']);
  });

  test("an unquoted reference inside a flow list is a YAML error ({ is a flow indicator): quote it", () => {
    expect(problems('version: "1.0"\nservers: [${A}]\n', { A: "x" })[0]?.message).toMatch(/^YAML syntax: /);
  });

  test("values reached through YAML aliases are interpolated too", () => {
    const config = expectValid(
      'version: "1.0"\nservers:\n  - name: a\n    url: &u ${U}\n    upstream_auth_type: none\n  - name: b\n    url: *u\n    upstream_auth_type: none\n',
      { U: "http://x/mcp" },
    );
    expect(config.servers.map((s) => s.url)).toEqual(["http://x/mcp", "http://x/mcp"]);
  });
});
