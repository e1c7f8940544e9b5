import * as clientNode from "@kubernetes/client-node";
import { nearestKey } from "@svc-mcp/gateway/config";
import { API_GROUP, GROUP_VERSION, KINDS, type Kind } from "../../src/api/names.ts";
import { validateResource } from "../../src/crd/validate-resource.ts";

// Offline validation of a manifest against Kubernetes' own OpenAPI schemas, the check kubeconform makes:
// - types, enums and required fields with the ajv validators that `kubernetes-models` compiles from the
//   official OpenAPI definitions;
// - unknown fields (a typo the API server would reject under kubectl's strict field validation, or prune in
//   silence) from the field lists of `@kubernetes/client-node`'s models, generated from the same definitions:
//   the kubernetes-models validators accept any extra property;
// - our own kinds against our CRDs (validateResource), as the API server does on `kubectl apply`.
// Only stable API versions are accepted: under the Kubernetes deprecation policy a GA version is never removed
// within a major release, so a manifest of stable APIs that the minimum supported version serves is served by
// every later one; the chart's minimum is checked by rendering with `helm template --kube-version`.

interface Validated {
  validate(): void;
}
type ModelClass = new (data: unknown) => Validated;
interface AttributeType {
  baseName: string;
  type: string;
}
interface ClientModel {
  attributeTypeMap?: AttributeType[];
}

/** Kinds whose schemas come from a third party's CRD, not from Kubernetes: checked by their own operator. */
export const THIRD_PARTY_KINDS = new Set(["monitoring.coreos.com/v1 ServiceMonitor"]);

const STABLE_VERSION = /^v\d+$/;

async function modelClass(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  // kubernetes-models lays its models out as <group>/<version>/<Kind>, the core group as v1/<Kind>.
  const module = `kubernetes-models/${apiVersion}/${kind}`;
  try {
    const exports = (await import(module)) as Record<string, unknown>;
    return exports[kind] as ModelClass | undefined;
  } catch {
    return undefined;
  }
}

const models = clientNode as unknown as Record<string, ClientModel | undefined>;

const capitalized = (word: string) => `${word.charAt(0).toUpperCase()}${word.slice(1)}`;

/** client-node names a model V1Deployment, or with its group in front where two groups share a kind
 *  (CoreV1Event, EventsV1Event). */
function clientModelName(apiVersion: string, kind: string): string {
  const [group, version = ""] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
  const plain = `${capitalized(version)}${kind}`;
  if (models[plain]?.attributeTypeMap) return plain;
  return `${capitalized(group?.split(".")[0] ?? "")}${plain}`;
}

/** Unknown fields under `value`, walking client-node's type names: `V1Container`, `Array<V1EnvVar>`,
 *  `{ [key: string]: string; }`; primitives, `any`, `IntOrString` and `Date` have no fields. */
function unknownFields(type: string, value: unknown, path: string, problems: string[]): void {
  if (value === null || typeof value !== "object") return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array?.[1]) {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries())
        unknownFields(array[1], item, `${path}[${index}]`, problems);
    }
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map?.[1]) {
    for (const [key, item] of Object.entries(value)) unknownFields(map[1], item, `${path}.${key}`, problems);
    return;
  }
  const attributes = models[type]?.attributeTypeMap;
  if (!attributes || Array.isArray(value)) return;
  const byName = new Map(attributes.map((attribute) => [attribute.baseName, attribute.type]));
  for (const [key, item] of Object.entries(value)) {
    const child = path === "" ? key : `${path}.${key}`;
    const childType = byName.get(key);
    if (childType === undefined) {
      const suggestion = nearestKey(key, [...byName.keys()]);
      problems.push(
        `${child}: unknown field "${key}"${suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`}`,
      );
      continue;
    }
    unknownFields(childType, item, child, problems);
  }
}

function schemaProblems(error: unknown): string[] {
  const errors = (error as { errors?: { instancePath: string; message?: string }[] }).errors;
  if (!errors) return [(error as Error).message];
  return errors.map((entry) => {
    const path = entry.instancePath
      .replace(/^\//, "")
      .replace(/\/(\d+)(?=\/|$)/g, "[$1]")
      .replace(/\//g, ".");
    return `${path === "" ? "(object)" : path}: ${entry.message ?? "is invalid"}`;
  });
}

export interface ValidateOptions {
  /** A server-side apply configuration names only the fields its manager owns: every field is optional. */
  applyConfiguration?: boolean;
}

/** Problems of one manifest as `field: message` lines, empty when it is valid. */
export async function validateKubernetesObject(
  manifest: { apiVersion?: unknown; kind?: unknown },
  options: ValidateOptions = {},
): Promise<string[]> {
  const { apiVersion, kind } = manifest;
  if (typeof apiVersion !== "string" || typeof kind !== "string")
    return ["(object): apiVersion and kind are required"];
  if (apiVersion.split("/")[0] === API_GROUP) {
    if (apiVersion !== GROUP_VERSION || !(kind in KINDS))
      return [`(object): unknown kind ${apiVersion} ${kind}`];
    return validateResource(kind as Kind, manifest);
  }
  if (THIRD_PARTY_KINDS.has(`${apiVersion} ${kind}`)) return [];
  const version = apiVersion.split("/").at(-1) ?? "";
  if (!STABLE_VERSION.test(version)) return [`apiVersion: ${apiVersion} is not a stable API version`];
  const Model = await modelClass(apiVersion, kind);
  if (!Model) return [`(object): ${apiVersion} ${kind} is not a Kubernetes kind`];
  const problems: string[] = [];
  try {
    new Model(manifest).validate();
  } catch (error) {
    problems.push(
      ...schemaProblems(error).filter(
        (problem) => !(options.applyConfiguration && problem.includes("must have required property")),
      ),
    );
  }
  const typeName = clientModelName(apiVersion, kind);
  if (!models[typeName]?.attributeTypeMap) problems.push(`(object): no field list for ${typeName}`);
  unknownFields(typeName, manifest, "", problems);
  return problems;
}
