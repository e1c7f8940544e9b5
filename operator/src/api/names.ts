// The operator's API group and kinds: the one place their names are spelled.

export const API_GROUP = "mcp.svc.dev";
export const API_VERSION = "v1alpha1";
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

/** Field manager for every server-side apply the operator makes (`kubectl get -o yaml --show-managed-fields`). */
export const FIELD_MANAGER = "svc-operator";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_VALUE = "svc-operator";
/** Put on every object the operator renders, naming the custom resource it came from. */
export const OWNER_KIND_LABEL = `${API_GROUP}/owner-kind`;
export const OWNER_NAME_LABEL = `${API_GROUP}/owner-name`;

export interface KindInfo {
  kind: "McpServer" | "IdentityProvider" | "McpGateway" | "OrganizationPolicy";
  plural: string;
  singular: string;
  shortNames: string[];
}

export const KINDS = {
  McpServer: { kind: "McpServer", plural: "mcpservers", singular: "mcpserver", shortNames: ["mcps"] },
  IdentityProvider: {
    kind: "IdentityProvider",
    plural: "identityproviders",
    singular: "identityprovider",
    shortNames: ["idp"],
  },
  McpGateway: { kind: "McpGateway", plural: "mcpgateways", singular: "mcpgateway", shortNames: ["mcpgw"] },
  OrganizationPolicy: {
    kind: "OrganizationPolicy",
    plural: "organizationpolicies",
    singular: "organizationpolicy",
    shortNames: ["orgpolicy"],
  },
} as const satisfies Record<string, KindInfo>;

export type Kind = keyof typeof KINDS;
