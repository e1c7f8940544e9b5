import { GROUP_VERSION, KINDS, type Kind } from "../api/names.ts";
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

export function renderAll(resources: Resource[]): RenderAllResult {
  const problems: ResourceProblem[] = [];
  const valid: Resource[] = [];
  for (const resource of resources) {
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
