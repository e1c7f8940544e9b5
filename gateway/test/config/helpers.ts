import { stringify } from "yaml";
import {
  type ConfigProblem,
  deriveConfig,
  type GatewayConfig,
  gatewayConfigSchema,
  validateConfigText,
} from "../../src/config/index.ts";

// biome-ignore lint/suspicious/noExplicitAny: fixtures are edited freely by path; the schema under test does the typing.
export type Tree = Record<string, any>;

// A configuration that is valid and has one of everything this gateway version builds, so a test can change a single
// value and see only the effect of that change. Sections of features it does not build are there in the form it
// accepts: exporters disabled, scrubbing rules with scrubbing off.
export function fullConfig(): Tree {
  return {
    version: "1.0",
    identity_providers: [
      {
        name: "idp",
        type: "hosted_idp",
        issuer: "https://idp.example.com/",
        jwks_uri: "https://idp.example.com/jwks",
        tenant_id: "tenant",
        project_id: "project",
      },
    ],
    servers: [{ name: "srv", url: "https://upstream.example.com/mcp", upstream_auth_type: "none" }],
    gateway_policy: {
      scrubbing: { custom_rules: [{ pattern: "x", method: "mask", replacement: "r" }] },
    },
    security: {},
    exporters: {
      search_index: [{ name: "es", enabled: false, url: "https://es.example.com" }],
      otel: [{ name: "otel", enabled: false, endpoint: "http://collector:4317" }],
      siem: [
        {
          name: "siem",
          enabled: false,
          dcr_immutable_id: "dcr-1",
          dcr_endpoint: "https://dce.example.com",
          tenant_id: "t",
          client_id: "c",
          client_secret: "s",
        },
      ],
    },
  };
}

/**
 * fullConfig() with control_plane turned on, its exporters enabled (where the rules for enabled exporters apply) and oauth_server with the identity-provider client it needs, so
 * every section's own rules and ranges are checked. specProblemLines shows those rules' problems alone.
 */
export function withEverySection(): Tree {
  const config = fullConfig();
  config.control_plane = {
    url: "https://cp.example.com",
    api_key: "key",
    gateway_id: "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
  };
  config.oauth_server = { idp_client_id: "gateway", idp_client_secret: "secret" };
  for (const type of ["search_index", "otel", "siem"]) delete config.exporters[type][0].enabled;
  return config;
}

/** What the schema makes of a file (defaults applied, values derived), before this version's refusals. */
export function parsedBySchema(config: unknown): GatewayConfig {
  return deriveConfig(gatewayConfigSchema.parse(config));
}

export function validate(config: unknown, env: Record<string, string | undefined> = {}) {
  return validateConfigText(typeof config === "string" ? config : stringify(config), { env });
}

export function expectValid(config: unknown, env: Record<string, string | undefined> = {}): GatewayConfig {
  const result = validate(config, env);
  if (!result.ok)
    throw new Error(
      `expected a valid config, got:\n${result.problems.map((p) => `${p.path}: ${p.message}`).join("\n")}`,
    );
  return result.config;
}

export function problems(config: unknown, env: Record<string, string | undefined> = {}): ConfigProblem[] {
  const result = validate(config, env);
  if (result.ok) throw new Error("expected the config to be refused, but it was accepted");
  return result.problems;
}

/** `path: message` lines, without positions, for compact assertions. */
export function problemLines(config: unknown, env: Record<string, string | undefined> = {}): string[] {
  return problems(config, env).map((p) => `${p.path}: ${p.message}`);
}

/**
 * Problem lines of a configuration, `path: message`; [] when it is valid.
 */
export function specProblemLines(config: unknown, env: Record<string, string | undefined> = {}): string[] {
  const result = validate(config, env);
  if (result.ok) return [];
  return result.problems.map((p) => `${p.path}: ${p.message}`);
}

/** Sets a value at a dotted path with [n] indexes, e.g. `servers[0].rbac_mode`. */
export function withValue(config: Tree, path: string, value: unknown): Tree {
  const segments = path.split(/\.|(?=\[)/).map((s) => (s.startsWith("[") ? Number(s.slice(1, -1)) : s));
  let target: Tree = config;
  for (const segment of segments.slice(0, -1)) {
    target[segment] ??= {};
    target = target[segment];
  }
  const last = segments[segments.length - 1] as string | number;
  if (value === undefined) delete target[last];
  else target[last] = value;
  return config;
}
