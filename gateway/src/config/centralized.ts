import type { ConfigProblem } from "./problems.ts";

// Centralized mode: no configuration file; everything comes from the control plane, which the gateway finds
// through these environment variables. The configuration built here holds only control_plane; the gateway then
// fetches the whole configuration from the control plane (control-plane/centralized-config.ts).

export const CONTROL_PLANE_ENV = {
  url: "SVC_CONTROL_PLANE_URL",
  api_key: "SVC_CONTROL_PLANE_API_KEY",
  gateway_id: "SVC_GATEWAY_ID",
  timeout: "SVC_CONTROL_PLANE_TIMEOUT",
  cache_ttl: "SVC_CONTROL_PLANE_CACHE_TTL",
  organization_id: "SVC_ORGANIZATION_ID",
} as const;

const REQUIRED = ["url", "api_key", "gateway_id"] as const;
const NUMERIC = new Set(["timeout", "cache_ttl"]);

export type CentralizedSettings =
  | { kind: "absent" }
  | { kind: "incomplete"; problems: ConfigProblem[] }
  | { kind: "present"; value: { version: "1.0"; control_plane: Record<string, string | number> } };

export function readCentralizedSettings(env: Record<string, string | undefined>): CentralizedSettings {
  const given = Object.entries(CONTROL_PLANE_ENV).filter(([, variable]) => nonEmpty(env[variable]));
  if (given.length === 0) return { kind: "absent" };
  const missing = REQUIRED.filter((field) => !nonEmpty(env[CONTROL_PLANE_ENV[field]]));
  if (missing.length > 0) {
    return {
      kind: "incomplete",
      problems: missing.map((field) => ({
        path: `control_plane.${field}`,
        message: `environment variable ${CONTROL_PLANE_ENV[field]} is required for centralized mode (no configuration file was found)`,
      })),
    };
  }
  const controlPlane: Record<string, string | number> = {};
  for (const [field, variable] of given) {
    const text = env[variable] as string;
    // A number that does not parse stays text, so the schema reports it against the field.
    controlPlane[field] = NUMERIC.has(field) && /^-?\d+$/.test(text) ? Number(text) : text;
  }
  return { kind: "present", value: { version: "1.0", control_plane: controlPlane } };
}

/** Names the environment variable behind a problem found in a configuration built from the environment. */
export function attributeToEnvironment(problem: ConfigProblem): ConfigProblem {
  if (problem.path === "control_plane") {
    const variables = REQUIRED.map((field) => CONTROL_PLANE_ENV[field]).join(", ");
    return {
      ...problem,
      message: `${problem.message} (centralized mode: the control plane comes from ${variables}; unset them and give the gateway a configuration file)`,
    };
  }
  const field = problem.path.replace(/^control_plane\./, "") as keyof typeof CONTROL_PLANE_ENV;
  const variable = CONTROL_PLANE_ENV[field];
  return variable === undefined ? problem : { ...problem, message: `${problem.message} (from ${variable})` };
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}
