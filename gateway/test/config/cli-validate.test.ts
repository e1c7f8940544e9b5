import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type Run, svcGateway as run } from "./svc-gateway-cli.ts";

const FULL_EXAMPLE = new URL("../../examples/full.yaml", import.meta.url).pathname;
const HASH_KEY = "a-deployment-hash-key-of-32-characters-or-more";

/** Runs in the test's scratch directory unless told otherwise. */
const svcGateway = (args: string[], options: Parameters<typeof run>[1] = {}): Promise<Run> =>
  run(args, { cwd: dir, ...options });

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "svc-cli-"));
  await writeFile(
    path.join(dir, "bad.yaml"),
    'version: "2.0"\nservers:\n  - name: a\n    url: nope\n    upstream_auth_type: none\n',
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("svc-gateway validate", () => {
  describe("what start refuses, validate refuses, naming the configuration path", () => {
    const server = "servers:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n    upstream_auth_type: none\n";
    test.each([
      [
        "a hash rule without SVC_SCRUB_HASH_KEY",
        `gateway_policy:\n  scrubbing:\n    enabled: true\n    custom_rules:\n      - { pattern: "EMP-[0-9]+", method: hash }\n`,
        "gateway_policy.scrubbing.custom_rules[0].method: hash needs a per-deployment key: set the environment variable SVC_SCRUB_HASH_KEY",
      ],
      [
        "a missing model directory, named where the gateway layer defines it",
        `gateway_policy:\n  firewall:\n    enabled: true\n    detectors:\n      - { type: onnx, name: local, path: ${JSON.stringify(path.join(tmpdir(), "no-such-model"))} }\n`,
        "gateway_policy.firewall.detectors[0].path: onnx detector 'local': path",
      ],
      [
        "PERSON, which needs a language model",
        "gateway_policy:\n  scrubbing:\n    enabled: true\n    recognizers:\n      - { entity_type: PERSON }\n",
        "PERSON is not supported",
      ],
    ])("%s", async (_what, policy, problem) => {
      const file = path.join(dir, `refused-${problem.length}.yaml`);
      await writeFile(file, `version: "1.0"\n${policy}${server}`);
      const validated = await svcGateway(["validate", "--config", file]);
      expect(validated.code).toBe(1);
      expect(validated.stderr).toContain(problem);
    });
  });

  test("the full example is valid: exit 0 with a summary", async () => {
    // Its billing server hashes employee ids: the key is a deployment secret, which start needs and so validate;
    // its model files are mounted where it runs, not here.
    const run = await svcGateway(["validate", "--config", FULL_EXAMPLE, "--skip-model-files"], {
      env: { SVC_SCRUB_HASH_KEY: HASH_KEY },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        `valid: ${FULL_EXAMPLE}`,
        "mode: distributed",
        "servers: 3 (2 enabled): github, billing, legacy-search (disabled)",
        "identity providers: 3: corporate-sso (hosted_idp), entra (directory_idp), partner-project (project_idp)",
        "exporters enabled: 0: none",
        "",
      ].join("\n"),
    );
  });

  test("the summary never prints a secret", async () => {
    const run = await svcGateway(["validate", "--config", FULL_EXAMPLE, "--json", "--skip-model-files"], {
      env: { SIEM_CLIENT_SECRET: "s3cr3t-value", SVC_SCRUB_HASH_KEY: HASH_KEY },
    });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("s3cr3t-value");
    expect(run.stdout).not.toContain("dev-only");
  });

  test("an identity provider without api_identifiers: refused unless the gateway knows its public URL", async () => {
    await writeFile(
      path.join(dir, "no-audience.yaml"),
      [
        'version: "1.0"',
        "identity_providers:",
        "  - name: corp",
        "    type: hosted_idp",
        "    issuer: https://login.example.com/",
        "    jwks_uri: https://login.example.com/jwks",
        "",
      ].join("\n"),
    );
    const refused = await svcGateway(["validate", "-c", "no-audience.yaml"], { env: { SVC_PUBLIC_URL: "" } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /identity_providers\[0\]\.api_identifiers: is empty .*any other API.*Set api_identifiers .*or set SVC_PUBLIC_URL/,
    );
    const known = await svcGateway(["validate", "-c", "no-audience.yaml"], {
      env: { SVC_PUBLIC_URL: "https://mcp.example.com" },
    });
    expect(known.code, known.stderr).toBe(0);
  });

  test("an invalid file: exit 1, one line per problem on stderr", async () => {
    const run = await svcGateway(["validate", "-c", "bad.yaml"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      [
        "invalid configuration: bad.yaml",
        'version (line 1:10): must be "1.0" (got "2.0")',
        'servers[0].url (line 4:10): must be an http:// or https:// URL (got "nope")',
        "",
      ].join("\n"),
    );
  });

  test("--json reports problems as data", async () => {
    const run = await svcGateway(["validate", "--config", "bad.yaml", "--json"]);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      valid: false,
      source: "bad.yaml",
      problems: [
        { path: "version", message: 'must be "1.0" (got "2.0")', line: 1, column: 10 },
        {
          path: "servers[0].url",
          message: 'must be an http:// or https:// URL (got "nope")',
          line: 4,
          column: 10,
        },
      ],
    });
  });

  test("--keep-unset-variables checks a file whose secrets are not in this environment", async () => {
    const input =
      'version: "1.0"\nexporters:\n  search_index:\n    - name: es\n      enabled: false\n      url: https://es.example.com\n      api_key: ${SECRET}\n';
    const strict = await svcGateway(["validate", "--config", "-"], { input });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain("environment variable SECRET is not set");
    expect((await svcGateway(["validate", "--config", "-", "--keep-unset-variables"], { input })).code).toBe(
      0,
    );
  });

  test("--json summary of a valid file", async () => {
    const run = await svcGateway(["validate", "--config", "-", "--json"], { input: 'version: "1.0"\n' });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      valid: true,
      source: "-",
      mode: "standalone",
      servers: [],
      identity_providers: [],
      exporters: [],
      warnings: [],
    });
  });

  test("enabled exporters are accepted and named; disabled ones are not listed", async () => {
    const input = [
      'version: "1.0"',
      "exporters:",
      "  search_index:",
      "    - name: es",
      "      url: https://es.example.com",
      "  otel:",
      "    - name: off",
      "      enabled: false",
      "  siem:",
      "    - name: sentinel",
      "      dcr_immutable_id: dcr-1",
      "      dcr_endpoint: https://dce.example.com",
      "      tenant_id: t",
      "      client_id: c",
      "      client_secret: s3cr3t-value",
      "",
    ].join("\n");
    const run = await svcGateway(["validate", "--config", "-"], { input });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("exporters enabled: 2: search_index:es, siem:sentinel\n");
    expect(run.stdout).not.toContain("s3cr3t-value");
  });

  test("finds ./svc-gateway.yaml without --config", async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), "svc-cli-cwd-"));
    await writeFile(path.join(cwd, "svc-gateway.yaml"), 'version: "1.0"\n');
    const run = await svcGateway(["validate"], { cwd });
    await rm(cwd, { recursive: true });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`valid: ${path.join(cwd, "svc-gateway.yaml")}`);
  });

  test("no file anywhere: exit 1 and the places searched", async () => {
    const run = await svcGateway(["validate"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "no configuration file found; searched, in order: /etc/svc-gateway/config.yaml",
    );
  });

  test.each([
    [["validate", "--bogus"]],
    [["validate", "extra"]],
    [["validate", "--config"]],
    [["frobnicate"]],
  ])("usage error %j: exit 2 with the usage", async (args) => {
    const run = await svcGateway(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/Usage: svc-gateway/);
  });

  test("--help for the tool and for the command", async () => {
    const top = await svcGateway(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Usage: svc-gateway <command>/);
    expect(top.stdout).toMatch(/validate\s+check a configuration file/);
    const sub = await svcGateway(["validate", "--help"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toMatch(/Exit status: 0 valid, 1 invalid/);
  });
});
