// The custom resources as the render sees them: plain objects, as read from YAML files or the API server.

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  resourceVersion?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Any Kubernetes object the render produces. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ResourceRef {
  kind: string;
  namespace: string;
  name: string;
}

export const DEFAULT_NAMESPACE = "default";

export function namespaceOf(resource: { metadata: ObjectMeta }): string {
  return resource.metadata.namespace ?? DEFAULT_NAMESPACE;
}

export function refOf(resource: Resource): ResourceRef {
  return { kind: resource.kind, namespace: namespaceOf(resource), name: resource.metadata.name };
}

export function refKey(ref: ResourceRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** Stable order (namespace, then name) so renders and golden files do not depend on list order. */
export function byNamespaceAndName(a: Resource, b: Resource): number {
  return namespaceOf(a).localeCompare(namespaceOf(b)) || a.metadata.name.localeCompare(b.metadata.name);
}

/** Owner reference making `owner` the controller of what it renders (garbage-collected with it). Without a
 *  uid (rendering from files, nothing in a cluster yet) there is nothing to point at. */
export function ownerReferencesTo(owner: Resource): OwnerReference[] | undefined {
  if (!owner.metadata.uid) return undefined;
  return [
    {
      apiVersion: owner.apiVersion,
      kind: owner.kind,
      name: owner.metadata.name,
      uid: owner.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
}
