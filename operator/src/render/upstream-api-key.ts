import { apiKeyHeaderVariable, apiKeyVariable } from "@svc-mcp/gateway/config";
import type { Resource } from "./resources.ts";
import type { GatewayEnv } from "./secret-env.ts";

// An McpServer with upstreamAuthType api_key sends a key the gateway reads from its environment:
// SVC_UPSTREAM_API_KEY_<NAME>, and optionally the header to carry it in SVC_UPSTREAM_KEY_HEADER_<NAME>, where
// NAME is the server's name upper-cased with every other character than A-Z and 0-9 turned into `_` (the
// gateway's own functions, from its config package). The key comes from a Secret via
// `upstreamApiKey.secretKeyRef` and becomes a valueFrom.secretKeyRef env entry on the gateway container.

interface FieldProblem {
  field: string;
  message: string;
}

interface UpstreamKeySpec {
  upstreamAuthType?: unknown;
  upstreamApiKey?: { secretKeyRef?: { name?: unknown; key?: unknown } };
  upstreamApiKeyHeader?: unknown;
}

/** The gateway env entries for one server's upstream key, or the problems that keep it from having them
 *  (the CRD's CEL rules, checked here too because nothing offline evaluates CEL). */
export function upstreamApiKeyEnv(
  server: Resource,
  serverName: string,
  gatewayNamespace: string,
): { env: GatewayEnv[]; problems: FieldProblem[] } {
  const spec = (server.spec ?? {}) as UpstreamKeySpec;
  const problems: FieldProblem[] = [];
  if (spec.upstreamApiKeyHeader !== undefined && spec.upstreamApiKey === undefined) {
    problems.push({
      field: "spec.upstreamApiKeyHeader",
      message: "upstreamApiKeyHeader needs upstreamApiKey",
    });
  }
  if (spec.upstreamApiKey === undefined) return { env: [], problems };
  if (spec.upstreamAuthType !== "api_key") {
    problems.push({
      field: "spec.upstreamApiKey",
      message: "upstreamApiKey needs upstreamAuthType: api_key",
    });
  }
  if ((server.metadata.namespace ?? "default") !== gatewayNamespace) {
    problems.push({
      field: "spec.upstreamApiKey.secretKeyRef",
      message: `the Secret must be in the gateway's namespace ${gatewayNamespace}: a pod can only read Secrets of its own namespace`,
    });
  }
  if (problems.length > 0) return { env: [], problems };
  const ref = spec.upstreamApiKey.secretKeyRef as { name: string; key: string };
  const env: GatewayEnv[] = [
    {
      name: apiKeyVariable(serverName),
      valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } },
    },
  ];
  if (typeof spec.upstreamApiKeyHeader === "string") {
    env.push({ name: apiKeyHeaderVariable(serverName), value: spec.upstreamApiKeyHeader });
  }
  return { env, problems };
}
