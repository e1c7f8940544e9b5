// Centralized mode: the whole configuration comes from the control plane as YAML text (the operator's render of the
// gateway's McpGateway). It goes through the same validator as a file, with `${VAR}` resolved from the gateway's
// environment (where the Secrets it references are), before it replaces anything. The control-plane settings stay
// the ones the gateway started with (from its environment): a document cannot point the gateway elsewhere.
import type { LoadedConfig } from "../config/load.ts";
import { ConfigError } from "../config/problems.ts";
import type { ControlPlaneConfig } from "../config/schema.ts";
import { validateConfigText } from "../config/validate.ts";

/** `source` of a configuration that came from the control plane (logs, the reloader). */
export const CONTROL_PLANE_SOURCE = "control plane";

export function configurationFromText(
  text: string,
  env: Record<string, string | undefined>,
  controlPlane: ControlPlaneConfig,
): LoadedConfig {
  const result = validateConfigText(text, { env });
  if (!result.ok) throw new ConfigError(result.problems, CONTROL_PLANE_SOURCE);
  return {
    config: { ...result.config, control_plane: controlPlane },
    mode: "centralized",
    source: CONTROL_PLANE_SOURCE,
    warnings: [],
  };
}
