import { describe, expect, test, vi } from "vitest";
import { svcGateway } from "./svc-gateway-cli.ts";

// A setting that turns on a feature this gateway version does not build is refused, through the real bin, with a
// problem naming the field and saying what to do instead. Accepting it would leave a platform team believing, say,
// that personal data is masked.

// Every case spawns a process: generous limits for a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

const SERVER = "servers:\n  - name: docs\n    url: http://docs.internal/mcp\n";
const IDP =
  "identity_providers:\n  - name: corp\n    type: hosted_idp\n    issuer: https://idp.example.com/\n    jwks_uri: https://idp.example.com/jwks\n";
const CONTROL_PLANE =
  "control_plane:\n  url: https://cp.example.com\n  api_key: k\n  gateway_id: 6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b\n";

const REFUSED: [feature: string, yaml: string, field: string, says: RegExp][] = [
  [
    "control_plane (distributed mode)",
    CONTROL_PLANE,
    "control_plane (line 3:3)",
    /^a control plane \(distributed mode\) is not supported yet by this gateway version: .*; remove control_plane/,
  ],
  [
    "the local servers policy",
    "gateway_policy:\n  local_servers:\n    enabled: true\n",
    "gateway_policy.local_servers.enabled (line 4:14)",
    /^the local servers policy is not supported yet by this gateway version: it would block or admit nothing; set it to false$/,
  ],
];

describe("svc-gateway validate refuses what this version does not build", () => {
  test.each(REFUSED)("%s", async (_feature, yaml, field, says) => {
    const run = await svcGateway(["validate", "--config", "-"], { input: `version: "1.0"\n${yaml}` });
    expect(run.code).toBe(1);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines[0]).toBe("invalid configuration: -");
    expect(lines.slice(1)).toEqual([expect.stringMatching(new RegExp(`^${escapeRegex(field)}: `))]);
    expect(lines[1]?.slice(field.length + 2)).toMatch(says);
  });

  test("the same sections, turned off, are accepted: a file can be prepared for when they land", async () => {
    const yaml = [
      'version: "1.0"',
      IDP.trimEnd(),
      "    client_id: ${SYNC_CLIENT_ID:}", // empty: not configured
      "    client_secret: ''",
      `${SERVER}    upstream_auth_type: none\n    security:\n      enabled: false\n      sensitive_fields: [ssn]`,
      "gateway_policy:\n  scrubbing:\n    enabled: false\n  local_servers:\n    enabled: false\n    mode: deny",
      "exporters:\n  otel:\n    - name: collector\n      enabled: false\n      endpoint: http://collector:4317",
      "",
    ].join("\n");
    const run = await svcGateway(["validate", "--config", "-"], { input: yaml });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
  });

  // Group sync is built: management credentials load, as a whole pair, and only on the provider type that uses them.
  test("group sync credentials load; half a pair or a credential of another provider type is refused", async () => {
    const complete = await svcGateway(["validate", "--config", "-"], {
      input: `version: "1.0"\n${IDP}    client_id: sync\n    client_secret: s3cr3t\n`,
    });
    expect(complete.stderr).toBe("");
    expect(complete.code).toBe(0);
    const half = await svcGateway(["validate", "--config", "-"], {
      input: `version: "1.0"\n${IDP}    client_id: sync\n`,
    });
    expect(half.code).toBe(1);
    expect(half.stderr).toMatch(
      /identity_providers\[0\]\.client_secret.*: is required with client_id\/client_secret for group sync \(leave both empty to turn it off\)/,
    );
    const unused = await svcGateway(["validate", "--config", "-"], {
      input: `version: "1.0"\n${IDP}    management_key: k\n`,
    });
    expect(unused.code).toBe(1);
    expect(unused.stderr).toMatch(/identity_providers\[0\]\.management_key.*: is used only by project_idp/);
  });

  test("centralized mode (the control plane from the environment) is refused by the same rule", async () => {
    const run = await svcGateway(["validate"], {
      env: {
        SVC_CONTROL_PLANE_URL: "https://cp.example.com",
        SVC_CONTROL_PLANE_API_KEY: "k",
        SVC_GATEWAY_ID: "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
      },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^invalid configuration: environment\ncontrol_plane: a control plane \(distributed mode\) is not supported yet by this gateway version: .*\(centralized mode: the control plane comes from SVC_CONTROL_PLANE_URL, SVC_CONTROL_PLANE_API_KEY, SVC_GATEWAY_ID; unset them and give the gateway a configuration file\)\n$/,
    );
  });
});

test("svc-gateway start refuses it too, before serving anything", async () => {
  const run = await svcGateway(["start", "--config", "-", "--port", "0", "--host", "127.0.0.1"], {
    input: 'version: "1.0"\ngateway_policy:\n  local_servers:\n    enabled: true\n',
    timeoutMs: 20_000,
  });
  expect(run.code).toBe(1);
  expect(run.stderr).toMatch(
    /invalid gateway configuration in -:\ngateway_policy\.local_servers\.enabled \(line 4:14\): the local servers policy is not supported yet by this gateway version/,
  );
  expect(run.stdout).not.toContain('"msg":"listening"');
});

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
