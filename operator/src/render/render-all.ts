import { nearestKey } from "@svc-mcp/gateway/config";
import { API_GROUP, GROUP_VERSION, KINDS, type Kind } from "../api/names.ts";
import { validateResource } from "../crd/validate-resource.ts";
import type { ResourceProblem } from "./problems.ts";
import { type GatewayRender, renderGateway } from "./render-gateway.ts";
import { byNamespaceAndName, type KubeObject, type Resource, refOf } from "./resources.ts";
import { renderServerWorkload } from "./server-workload.ts";

// Everything the operator would apply for a set of resources: per McpGateway its ConfigMap and gateway env,
// per McpServer with a deployment block its Deployment and Service. `svc-operator render` prints this; the
// controller applies the same pieces one resource at a time.

export interface RenderAllResult {
  gateways: GatewayRender[];
  objects: KubeObject[];
  problems: ResourceProblem[];
}

export function isOperatorKind(kind: string): kind is Kind {
  return kind in KINDS;
}

/** Other kinds (a Secret, a Deployment) may sit beside ours and are skipped; a resource of our API group
 *  with a wrong version or kind, or a kind one typo away from ours, is a mistake that would otherwise be
 *  skipped in silence. */
function misnamedResource(resource: Resource): { field: string; message: string } | undefined {
  const ours = resource.apiVersion.split("/")[0] === API_GROUP;
  if (ours && resource.apiVersion !== GROUP_VERSION)
    return { field: "apiVersion", message: `must be ${GROUP_VERSION} (was "${resource.apiVersion}")` };
  if (isOperatorKind(resource.kind)) return undefined;
  const suggestion = nearestKey(resource.kind, Object.keys(KINDS));
  if (!ours && suggestion === undefined) return undefined;
  const hint = suggestion === undefined ? `one of ${Object.keys(KINDS).join(", ")}` : `"${suggestion}"`;
  return { field: "kind", message: `unknown kind "${resource.kind}" (did you mean ${hint}?)` };
}

export function renderAll(resources: Resource[]): RenderAllResult {
  const problems: ResourceProblem[] = [];
  const valid: Resource[] = [];
  for (const resource of resources) {
    const misnamed = misnamedResource(resource);
    if (misnamed) problems.push({ ref: refOf(resource), field: misnamed.field, message: misnamed.message });
    if (resource.apiVersion !== GROUP_VERSION || !isOperatorKind(resource.kind)) continue;
    const schemaProblems = validateResource(resource.kind, resource);
    for (const line of schemaProblems) {
      const [field = "", ...message] = line.split(": ");
      problems.push({
        ref: refOf(resource),
        field: field === "(resource)" ? "" : field,
        message: message.join(": "),
      });
    }
    if (schemaProblems.length === 0) valid.push(resource);
  }
  const ofKind = (kind: Kind) => valid.filter((resource) => resource.kind === kind).sort(byNamespaceAndName);
  const servers = ofKind("McpServer");
  const identityProviders = ofKind("IdentityProvider");
  const gateways = ofKind("McpGateway").map((gateway) =>
    renderGateway({ gateway, servers, identityProviders }),
  );
  const objects: KubeObject[] = [];
  for (const render of gateways) {
    problems.push(...render.problems);
    objects.push(render.configMap, render.gatewayEnvPatch);
  }
  for (const server of servers) objects.push(...renderServerWorkload(server));
  return { gateways, objects, problems };
}
