import { snakeToCamel } from "../api/key-case.ts";
import type { ResourceRef } from "./resources.ts";

/** One thing wrong, pinned to the resource (and its field) that caused it. */
export interface ResourceProblem {
  ref: ResourceRef;
  /** Resource path, e.g. `spec.capabilityOverrides[0].rbacMode`; empty for the resource as a whole. */
  field: string;
  message: string;
}

export function formatResourceProblem(problem: ResourceProblem): string {
  const where = problem.field === "" ? "" : `${problem.field}: `;
  return `${problem.ref.kind} ${problem.ref.namespace}/${problem.ref.name}: ${where}${problem.message}`;
}

/** `capability_overrides[0].rbac_mode` → `capabilityOverrides[0].rbacMode` */
export function gatewayPathToResourcePath(path: string): string {
  return path.replace(/[A-Za-z_][A-Za-z0-9_]*/g, (segment) => snakeToCamel(segment));
}

export interface RenderedSource {
  /** Where the gateway config's path starts for this resource, e.g. `servers[2]`. */
  gatewayPath: string;
  ref: ResourceRef;
  /** Where its gateway fields sit in the resource. */
  resourcePath: string;
}

/**
 * A problem the gateway's validator found in the rendered YAML (path like `servers[2].rbac_mode`), mapped
 * back to the resource it came from. The longest matching source wins: `servers[2]` before the gateway's
 * catch-all "" entry.
 */
export function mapGatewayProblem(
  problem: { path: string; message: string },
  sources: RenderedSource[],
): ResourceProblem | undefined {
  const candidates = sources
    .filter(
      (source) =>
        source.gatewayPath === "" ||
        problem.path === source.gatewayPath ||
        problem.path.startsWith(`${source.gatewayPath}.`) ||
        problem.path.startsWith(`${source.gatewayPath}[`),
    )
    .sort((a, b) => b.gatewayPath.length - a.gatewayPath.length);
  const source = candidates[0];
  if (!source) return undefined;
  const rest = problem.path.slice(source.gatewayPath.length).replace(/^\./, "");
  const field = [source.resourcePath, gatewayPathToResourcePath(rest)]
    .filter((part) => part !== "")
    .join(rest.startsWith("[") ? "" : ".");
  return { ref: source.ref, field, message: problem.message };
}
