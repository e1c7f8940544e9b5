import { deriveServer } from "./derive.ts";
import type { PathSegment } from "./problems.ts";
import { gatewayPolicySchema, type ParsedServerConfig, serverSchema } from "./schema.ts";

// Validation rules that relate several objects: unique names (identity providers, servers, exporters of one
// type), a server's idp names a provider of this file, and rbac_mode agrees across levels. They run even when other parts
// of the file are invalid, on whatever parts did parse, so one run reports every problem.

export interface RuleProblem {
  path: PathSegment[];
  message: string;
}

const EXPORTER_TYPES = ["search_index", "otel", "siem"] as const;

export function checkCrossObjectRules(raw: unknown): RuleProblem[] {
  const root = asRecord(raw);
  const problems: RuleProblem[] = [];
  const providers = asList(root.identity_providers);
  const servers = asList(root.servers);

  problems.push(...uniqueNames(providers, "identity_providers", "identity provider"));
  problems.push(...uniqueNames(servers, "servers", "server"));
  const exporters = asRecord(root.exporters);
  for (const type of EXPORTER_TYPES) {
    problems.push(
      ...uniqueNames(asList(exporters[type]), `exporters.${type}`, `${type} exporter`, ["exporters", type]),
    );
  }

  // A server's idp names a provider in this file.
  const providerNames = [
    ...new Set(providers.map((p) => asRecord(p).name).filter((n): n is string => typeof n === "string")),
  ];
  servers.forEach((server, index) => {
    const idp = asRecord(server).idp;
    if (typeof idp === "string" && !providerNames.includes(idp)) {
      const known = providerNames.length === 0 ? "none are configured" : `known: ${providerNames.join(", ")}`;
      problems.push({
        path: ["servers", index, "idp"],
        message: `no identity provider named "${idp}" (${known})`,
      });
    }
  });

  if (root.oauth_server !== undefined) {
    // The authorization server owns /oauth/*, which is where a server named oauth would be served (/oauth/mcp).
    servers.forEach((server, index) => {
      if (asRecord(server).name === "oauth") {
        problems.push({
          path: ["servers", index, "name"],
          message: "oauth is taken by oauth_server (its endpoints live under /oauth/); rename this server",
        });
      }
    });
    // Users log in at an identity provider, and the gateway needs its client there to send them.
    const oauth = asRecord(root.oauth_server);
    if (providers.length === 0) {
      problems.push({
        path: ["oauth_server"],
        message: "needs an identity provider (identity_providers) where users log in; the first one is used",
      });
    }
    for (const field of ["idp_client_id", "idp_client_secret"]) {
      if (oauth[field] === undefined) {
        problems.push({
          path: ["oauth_server", field],
          message: "is required: the gateway's client at the identity provider where users log in",
        });
      }
    }
  }

  problems.push(...rbacModesAgree(root.gateway_policy, servers));
  return problems;
}

function uniqueNames(
  items: unknown[],
  label: string,
  what: string,
  base: PathSegment[] = [label],
): RuleProblem[] {
  const firstIndex = new Map<string, number>();
  const problems: RuleProblem[] = [];
  items.forEach((item, index) => {
    const name = asRecord(item).name;
    if (typeof name !== "string") return;
    const first = firstIndex.get(name);
    if (first === undefined) firstIndex.set(name, index);
    else
      problems.push({
        path: [...base, index, "name"],
        message: `duplicate ${what} name "${name}" (also ${label}[${first}])`,
      });
  });
  return problems;
}

/**
 * Rule 9: `allow` and `deny` cannot be mixed across levels. Where the gateway default and a server both enable RBAC
 * their modes must agree, and likewise a server and each of its enabled capability overrides.
 */
function rbacModesAgree(rawPolicy: unknown, servers: unknown[]): RuleProblem[] {
  const policy = gatewayPolicySchema.safeParse(rawPolicy ?? {});
  if (!policy.success) return []; // its own problems are reported by the schema
  const gateway = policy.data.server_rbac;
  const problems: RuleProblem[] = [];
  servers.forEach((rawServer, index) => {
    const parsed = serverSchema.safeParse(rawServer);
    if (!parsed.success) return;
    const server = deriveServer(parsed.data, policy.data);
    if (gateway.rbac_enabled && server.rbac_enabled && server.rbac_mode !== gateway.rbac_mode) {
      problems.push({
        path: ["servers", index, "rbac_mode"],
        message: `is ${server.rbac_mode} but gateway_policy.server_rbac.rbac_mode is ${gateway.rbac_mode}; allow and deny cannot be mixed across levels`,
      });
    }
    problems.push(...overrideModesAgree(parsed.data, server.rbac_enabled, server.rbac_mode, index));
  });
  return problems;
}

function overrideModesAgree(
  server: ParsedServerConfig,
  enabled: boolean,
  mode: string,
  index: number,
): RuleProblem[] {
  if (!enabled) return [];
  return server.capability_overrides.flatMap((override, overrideIndex) =>
    override.rbac_enabled && override.rbac_mode !== mode
      ? [
          {
            path: ["servers", index, "capability_overrides", overrideIndex, "rbac_mode"],
            message: `is ${override.rbac_mode} but the server's rbac_mode is ${mode}; allow and deny cannot be mixed across levels`,
          },
        ]
      : [],
  );
}

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
