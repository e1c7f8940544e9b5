// The organization layer: how it merges with the gateway's configuration (scrubbing by union; everything else the
// gateway may only restrict) and the access rules it adds (organization server_rbac, local servers policies).
import { describe, expect, test } from "vitest";
import type { LoadedConfig } from "../../src/config/index.ts";
import { type PolicyDocument, policyDocumentSchema, validateConfigText } from "../../src/config/index.ts";
import { checkAccessRules } from "../../src/control-plane/organization-access.ts";
import { buildSnapshot, type ConfigSnapshot } from "../../src/runtime/config-snapshot.ts";

const BASE = `version: "1.0"
servers:
  - name: tools
    url: http://10.0.0.5:3000/mcp
    upstream_auth_type: none
`;

function loadedFrom(yaml: string, mode: LoadedConfig["mode"] = "distributed"): LoadedConfig {
  const result = validateConfigText(yaml);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return { config: result.config, mode, source: "test.yaml", warnings: [] };
}

function policy(body: unknown): PolicyDocument {
  return policyDocumentSchema.parse({ organization_id: "acme", generation: 3, policy: body });
}

function snapshotWith(yaml: string, organization: unknown, mode: LoadedConfig["mode"] = "distributed") {
  return buildSnapshot(loadedFrom(yaml, mode), {}, 1, false, undefined, policy(organization));
}

/** Whether a user with `groups` passes the extra access rules of server `tools`. */
function admitted(snapshot: ConfigSnapshot, groups: string[]): boolean {
  const rules = snapshot.routes.get("tools")?.accessRules;
  if (rules === undefined) return true;
  try {
    checkAccessRules(rules, groups, "tools");
    return true;
  } catch {
    return false;
  }
}

describe("organization policy document", () => {
  test("is refused when a value is out of range or a key is unknown", () => {
    const bad = policyDocumentSchema.safeParse({
      organization_id: "acme",
      generation: 1,
      policy: { rate_limit: { requests_per_minute: 0 }, surprise: true },
    });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((issue) => issue.path.join("."))).toEqual(
      expect.arrayContaining(["policy.rate_limit.requests_per_minute", "policy"]),
    );
  });
});

describe("merging the organization layer", () => {
  test("scrubbing is the union: an organization rule masks even with the gateway's scrubbing off", () => {
    const snapshot = snapshotWith(BASE, {
      scrubbing: { enabled: true, custom_rules: [{ pattern: "ACME-\\d+", method: "mask" }] },
    });
    expect(snapshot.routes.get("tools")?.scrubbing).toBeDefined();
    expect(buildSnapshot(loadedFrom(BASE), {}, 1, false).routes.get("tools")?.scrubbing).toBeUndefined();
  });

  test("organization server_rbac refuses its denied groups on every server, before the server's own RBAC", () => {
    const snapshot = snapshotWith(BASE, {
      server_rbac: { rbac_enabled: true, rbac_mode: "deny", denied_groups: ["contractors"] },
    });
    expect(admitted(snapshot, ["contractors"])).toBe(false);
    expect(admitted(snapshot, ["engineering"])).toBe(true);
    const allowOnly = snapshotWith(BASE, {
      server_rbac: { rbac_enabled: true, rbac_mode: "allow", allowed_groups: ["staff"] },
    });
    expect(admitted(allowOnly, ["engineering"])).toBe(false);
    expect(admitted(allowOnly, ["staff", "engineering"])).toBe(true);
  });

  test("capability default groups: the intersection; lists with nothing in common are refused", () => {
    const yaml = `${BASE}gateway_policy:\n  capability_rbac:\n    destructive:\n      default_groups: [admins, ops]\n`;
    const narrowed = snapshotWith(yaml, {
      capability_rbac: {
        destructive: { default_groups: ["admins", "sre"] },
        read_only: { default_groups: ["all"] },
      },
    });
    const merged = narrowed.loaded.config.gateway_policy.capability_rbac;
    expect(merged.destructive.default_groups).toEqual(["admins"]);
    expect(merged.read_only.default_groups).toEqual(["all"]);
    expect(() =>
      snapshotWith(yaml, { capability_rbac: { destructive: { default_groups: ["sre"] } } }),
    ).toThrow(
      /gateway_policy\.capability_rbac\.destructive\.default_groups: shares no group with the organization policy's \(sre\)/,
    );
  });

  test("rate limit: the stricter one wins, and the gateway cannot turn the organization's off", () => {
    const organization = { rate_limit: { requests_per_minute: 100, window_seconds: 60 } };
    expect(snapshotWith(BASE, organization).rateLimit).toEqual({ limit: 100, windowSeconds: 60 });
    const stricter = `${BASE}security:\n  rate_limiting:\n    requests_per_minute: 20\n`;
    expect(snapshotWith(stricter, organization).rateLimit).toEqual({ limit: 20, windowSeconds: 60 });
    const off = `${BASE}security:\n  rate_limiting:\n    enabled: false\n`;
    expect(snapshotWith(off, organization).rateLimit).toEqual({ limit: 100, windowSeconds: 60 });
  });

  test("a per-server limit counts apart from the global one", () => {
    const snapshot = snapshotWith(BASE, {
      server_rate_limits: [{ server: "tools", requests_per_minute: 5 }],
    });
    expect(snapshot.routes.get("tools")?.serverRateLimit).toEqual({
      limit: 5,
      windowSeconds: 60,
      scope: "server/tools",
    });
  });
});

describe("local servers policy", () => {
  const withLocal = (policyYaml: string) => `${BASE}gateway_policy:\n  local_servers:\n${policyYaml}`;

  test("mode allow admits only the listed groups to servers defined in the YAML", () => {
    const snapshot = buildSnapshot(
      loadedFrom(withLocal("    enabled: true\n    mode: allow\n    groups: [platform]\n"), "standalone"),
      {},
      1,
      false,
    );
    expect(admitted(snapshot, ["platform"])).toBe(true);
    expect(admitted(snapshot, ["engineering"])).toBe(false);
  });

  test("mode deny without groups blocks local servers for everyone; off or allow-all adds no rule", () => {
    const blocked = buildSnapshot(loadedFrom(withLocal("    enabled: true\n    mode: deny\n")), {}, 1, false);
    expect(admitted(blocked, ["anyone"])).toBe(false);
    const allowAll = buildSnapshot(loadedFrom(withLocal("    enabled: true\n")), {}, 1, false);
    expect(allowAll.routes.get("tools")?.accessRules).toBeUndefined();
    const off = buildSnapshot(loadedFrom(withLocal("    enabled: false\n    mode: deny\n")), {}, 1, false);
    expect(off.routes.get("tools")?.accessRules).toBeUndefined();
  });

  test("the organization's policy applies to a gateway's own servers, not to servers the control plane defines", () => {
    const organization = { local_servers: { enabled: true, mode: "deny", groups: ["contractors"] } };
    expect(admitted(snapshotWith(BASE, organization), ["contractors"])).toBe(false);
    expect(admitted(snapshotWith(BASE, organization, "centralized"), ["contractors"])).toBe(true);
  });
});
