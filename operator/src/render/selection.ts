import type { LabelSelector } from "../api/operator-schemas.ts";
import { namespaceOf, type Resource } from "./resources.ts";

// Which McpServers / IdentityProviders an McpGateway selects: a namespace list (absent: its own namespace;
// "*": all) and a Kubernetes label selector (matchLabels AND matchExpressions).

export function selects(
  selector: LabelSelector | undefined,
  gatewayNamespace: string,
  resource: Resource,
): boolean {
  const namespaces = selector?.namespaces ?? [gatewayNamespace];
  if (!namespaces.includes("*") && !namespaces.includes(namespaceOf(resource))) return false;
  const labels = resource.metadata.labels ?? {};
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expression of selector?.matchExpressions ?? []) {
    const present = expression.key in labels;
    const value = labels[expression.key];
    const values = expression.values ?? [];
    const ok =
      expression.operator === "Exists"
        ? present
        : expression.operator === "DoesNotExist"
          ? !present
          : expression.operator === "In"
            ? value !== undefined && values.includes(value)
            : value === undefined || !values.includes(value);
    if (!ok) return false;
  }
  return true;
}
