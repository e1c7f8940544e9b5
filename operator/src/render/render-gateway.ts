import { validateConfigText } from "@svc-mcp/gateway/config";
import { stringify } from "yaml";
import { FieldError, type SecretReference, toGatewayValue } from "../api/gateway-fields.ts";
import {
  type LabelSelector,
  OAUTH_SERVER_KEY_VARIABLES,
  type OAuthServerKeys,
} from "../api/operator-schemas.ts";
import { kindSchemas } from "../api/resource-schemas.ts";
import { renderedLabels } from "./labels.ts";
import { mapGatewayProblem, type RenderedSource, type ResourceProblem } from "./problems.ts";
import {
  byNamespaceAndName,
  type KubeObject,
  namespaceOf,
  ownerReferencesTo,
  type Resource,
  type ResourceRef,
  refOf,
} from "./resources.ts";
import { type GatewayEnv, secretEnv, secretVariableName } from "./secret-env.ts";
import { selects } from "./selection.ts";
import { derivedServerUrl, serverDeploymentOf } from "./server-workload.ts";
import { upstreamApiKeyEnv } from "./upstream-api-key.ts";

// The pure render of one McpGateway: the resources it selects → gateway YAML (validated with the gateway's
// own validator) → a ConfigMap, plus the secretKeyRef env entries of the gateway container. No I/O.

export const DEFAULT_CONFIG_KEY = "config.yaml";
export const DEFAULT_CONTAINER_NAME = "gateway";
export const GATEWAY_LABEL = "mcp.svc.dev/gateway";

export interface RenderInput {
  gateway: Resource;
  servers: Resource[];
  identityProviders: Resource[];
}

export interface GatewayRender {
  gateway: ResourceRef;
  /** Problems pinned to resources; when non-empty the render must not be applied. */
  problems: ResourceProblem[];
  servers: ResourceRef[];
  identityProviders: ResourceRef[];
  /** Server name in the YAML → the URL the gateway uses, for McpServer status. */
  serverUrls: Map<string, string>;
  yaml: string;
  configMap: KubeObject;
  /** Partial Deployment for server-side apply: only the gateway container's secret env entries. */
  gatewayEnvPatch: KubeObject;
  env: GatewayEnv[];
}

interface GatewaySpecSettings {
  configMapName?: string;
  configKey?: string;
  deploymentName?: string;
  containerName?: string;
  serverSelector?: LabelSelector;
  identityProviderSelector?: LabelSelector;
  oauthServerKeys?: OAuthServerKeys;
}

export function gatewaySettings(gateway: Resource) {
  const spec = (gateway.spec ?? {}) as GatewaySpecSettings;
  return {
    configMapName: spec.configMapName ?? `${gateway.metadata.name}-config`,
    configKey: spec.configKey ?? DEFAULT_CONFIG_KEY,
    deploymentName: spec.deploymentName ?? gateway.metadata.name,
    containerName: spec.containerName ?? DEFAULT_CONTAINER_NAME,
    serverSelector: spec.serverSelector,
    identityProviderSelector: spec.identityProviderSelector,
  };
}

export function renderGateway(input: RenderInput): GatewayRender {
  const { gateway } = input;
  const gatewayRef = refOf(gateway);
  const gatewayNamespace = namespaceOf(gateway);
  const settings = gatewaySettings(gateway);
  const schemas = kindSchemas();
  const problems: ResourceProblem[] = [];
  const sources: RenderedSource[] = [{ gatewayPath: "", ref: gatewayRef, resourcePath: "spec" }];
  const env: GatewayEnv[] = [];
  const serverUrls = new Map<string, string>();

  /** Maps one resource's spec part to gateway keys; problems go to that resource. */
  const convert = (
    resource: Resource,
    value: Record<string, unknown>,
    schemaKind: keyof typeof schemas,
    path: string,
  ) => {
    const ref = refOf(resource);
    const onSecret = (reference: SecretReference): string => {
      if (namespaceOf(resource) !== gatewayNamespace) {
        throw new FieldError(
          `${reference.field}.secretKeyRef`,
          `the Secret must be in the gateway's namespace ${gatewayNamespace}: a pod can only read Secrets of its own namespace`,
        );
      }
      const variable = secretVariableName(ref, reference.field);
      env.push(secretEnv(variable, reference));
      return variable;
    };
    try {
      return toGatewayValue(value, schemas[schemaKind].gateway.schema, path, onSecret) as Record<
        string,
        unknown
      >;
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      problems.push({ ref, field: error.field, message: error.message });
      return undefined;
    }
  };

  const gatewayPart = (spec: Record<string, unknown> | undefined, operatorKeys: string[]) =>
    Object.fromEntries(Object.entries(spec ?? {}).filter(([key]) => !operatorKeys.includes(key)));

  const identityProviders = input.identityProviders
    .filter((idp) => selects(settings.identityProviderSelector, gatewayNamespace, idp))
    .sort(byNamespaceAndName);
  const servers = input.servers
    .filter((server) => selects(settings.serverSelector, gatewayNamespace, server))
    .sort(byNamespaceAndName);

  const renderedIdps = identityProviders.map((idp, index) => {
    sources.push({ gatewayPath: `identity_providers[${index}]`, ref: refOf(idp), resourcePath: "spec" });
    const entry = convert(
      idp,
      gatewayPart(idp.spec, schemas.IdentityProvider.gateway.operatorKeys),
      "IdentityProvider",
      "spec",
    );
    return { name: idp.metadata.name, ...entry };
  });

  const renderedServers = servers.map((server, index) => {
    sources.push({ gatewayPath: `servers[${index}]`, ref: refOf(server), resourcePath: "spec" });
    const entry = convert(
      server,
      gatewayPart(server.spec, schemas.McpServer.gateway.operatorKeys),
      "McpServer",
      "spec",
    );
    const deployment = serverDeploymentOf(server);
    const hasUrl = typeof server.spec?.url === "string";
    if (hasUrl === (deployment !== undefined)) {
      problems.push({ ref: refOf(server), field: "spec", message: "set exactly one of url or deployment" });
    }
    const url = deployment ? derivedServerUrl(server, deployment) : (entry?.url as string | undefined);
    const name = (entry?.name as string | undefined) ?? server.metadata.name;
    if (url) serverUrls.set(name, url);
    const upstreamKey = upstreamApiKeyEnv(server, name, gatewayNamespace);
    env.push(...upstreamKey.env);
    for (const problem of upstreamKey.problems) problems.push({ ref: refOf(server), ...problem });
    return { name, ...(url ? { url } : {}), ...entry };
  });

  const gatewaySpec =
    convert(
      gateway,
      gatewayPart(gateway.spec, schemas.McpGateway.gateway.operatorKeys),
      "McpGateway",
      "spec",
    ) ?? {};
  const config: Record<string, unknown> = { version: "1.0" };
  if (gatewaySpec.control_plane !== undefined) config.control_plane = gatewaySpec.control_plane;
  config.identity_providers = renderedIdps;
  config.servers = renderedServers;
  for (const key of ["gateway_policy", "security", "oauth_server", "exporters"]) {
    if (gatewaySpec[key] !== undefined) config[key] = gatewaySpec[key];
  }
  const oauthKeys = (gateway.spec as GatewaySpecSettings | undefined)?.oauthServerKeys;
  if (gatewaySpec.oauth_server !== undefined && oauthKeys === undefined) {
    problems.push({
      ref: gatewayRef,
      field: "spec.oauthServerKeys",
      message:
        "is required with oauthServer: the signing keys and the KV key, from a Secret every replica reads (gateway/docs/oauth-server.md)",
    });
  } else if (gatewaySpec.oauth_server !== undefined && oauthKeys?.signingKeys === undefined) {
    problems.push({
      ref: gatewayRef,
      field: "spec.oauthServerKeys.signingKeys",
      message:
        "is required with oauthServer: the keys its tokens are signed with (gateway/docs/oauth-server.md)",
    });
  }
  if (oauthKeys !== undefined) {
    for (const [field, variable] of Object.entries(OAUTH_SERVER_KEY_VARIABLES)) {
      const reference = oauthKeys[field as keyof OAuthServerKeys]?.secretKeyRef;
      if (reference !== undefined) {
        env.push({
          name: variable,
          valueFrom: { secretKeyRef: { name: reference.name, key: reference.key } },
        });
      }
    }
  }
  const yaml = `# Rendered by svc-operator from McpGateway ${gatewayRef.namespace}/${gatewayRef.name}; edits are overwritten.\n${stringify(config, { lineWidth: 0 })}`;

  if (problems.length === 0) {
    // keepUnsetVariables: the ${VAR}s are resolved in the gateway pod, from the Secrets. env {}: never
    // interpolate the operator's own environment into what it checks.
    const result = validateConfigText(yaml, { env: {}, keepUnsetVariables: true });
    if (!result.ok) {
      for (const problem of result.problems) {
        problems.push(
          mapGatewayProblem(problem, sources) ?? {
            ref: gatewayRef,
            field: "",
            message: `${problem.path}: ${problem.message}`,
          },
        );
      }
    }
  }

  const ownerReferences = ownerReferencesTo(gateway);
  const metadata = (name: string) => ({
    name,
    namespace: gatewayNamespace,
    labels: { ...renderedLabels(gateway), [GATEWAY_LABEL]: gateway.metadata.name },
    ...(ownerReferences ? { ownerReferences } : {}),
  });
  env.sort((a, b) => a.name.localeCompare(b.name));
  return {
    gateway: gatewayRef,
    problems,
    servers: servers.map(refOf),
    identityProviders: identityProviders.map(refOf),
    serverUrls,
    yaml,
    env,
    configMap: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: metadata(settings.configMapName),
      data: { [settings.configKey]: yaml },
    },
    gatewayEnvPatch: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      // Only a label and the env entries: everything else in the Deployment belongs to its author (Helm).
      metadata: {
        name: settings.deploymentName,
        namespace: gatewayNamespace,
        labels: { [GATEWAY_LABEL]: gateway.metadata.name },
      },
      spec: { template: { spec: { containers: [{ name: settings.containerName, env }] } } },
    },
  };
}
