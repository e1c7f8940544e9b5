import { createHash } from "node:crypto";
import type { SecretReference } from "../api/gateway-fields.ts";
import type { ResourceRef } from "./resources.ts";

// Secret values never enter the ConfigMap: each secretKeyRef becomes an environment variable of the gateway
// container (valueFrom.secretKeyRef) and the YAML refers to it as ${VAR}. The name says where it comes from
// and ends in a short hash of the exact origin, so two resources can never share a variable by accident.

export interface SecretEnv {
  name: string;
  valueFrom: { secretKeyRef: { name: string; key: string } };
}

/** An env entry the operator puts on the gateway container: from a Secret, or a plain value. */
export type GatewayEnv = SecretEnv | { name: string; value: string };

export function secretVariableName(ref: ResourceRef, field: string): string {
  const readable = `${ref.kind}_${ref.name}_${field.replace(/^spec\./, "")}`
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/[^A-Za-z0-9]+/g, "_")
    .toUpperCase();
  const hash = createHash("sha256")
    .update(`${ref.kind}/${ref.namespace}/${ref.name}/${field}`)
    .digest("hex")
    .slice(0, 6)
    .toUpperCase();
  return `SVC_SECRET_${readable}_${hash}`;
}

export function secretEnv(variable: string, reference: SecretReference): SecretEnv {
  return { name: variable, valueFrom: { secretKeyRef: { name: reference.name, key: reference.key } } };
}
