import type { JsonSchema } from "./json-schema.ts";
import { assertRoundTrip, camelToSnake } from "./key-case.ts";
import { isSecretField } from "./secret-fields.ts";

// Turns a gateway config JSON schema (snake_case, from @svc-mcp/gateway/config) into the shape a custom resource
// uses: camelCase keys, and secret fields as `{ secretKeyRef: { name, key } }`. The reverse, from a
// resource's spec back to gateway YAML, walks the same converted schema (`toGatewayValue`), so both
// directions follow one rule and free-form maps (e.g. OTLP headers) keep their keys untouched.

export const secretKeyRefSchema: JsonSchema = {
  type: "object",
  description: "Read from a key of a Secret in the gateway's namespace; never copied into the ConfigMap",
  properties: {
    secretKeyRef: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 1, description: "Secret name" },
        key: { type: "string", minLength: 1, description: "Key in the Secret" },
      },
      required: ["name", "key"],
    },
  },
  required: ["secretKeyRef"],
};

export function toResourceSchema(node: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...node };
  if (node.properties) {
    const properties: Record<string, JsonSchema> = {};
    for (const [snakeKey, child] of Object.entries(node.properties)) {
      const camelKey = assertRoundTrip(snakeKey);
      properties[camelKey] =
        isSecretField(snakeKey) && child.type === "string"
          ? {
              ...secretKeyRefSchema,
              description: `${child.description ?? snakeKey}. ${secretKeyRefSchema.description}`,
            }
          : toResourceSchema(child);
    }
    out.properties = properties;
    if (node.required) out.required = node.required.map(assertRoundTrip);
  }
  if (node.items) out.items = toResourceSchema(node.items);
  if (typeof node.additionalProperties === "object")
    out.additionalProperties = toResourceSchema(node.additionalProperties);
  return out;
}

export interface SecretReference {
  /** Where it sits in the resource, e.g. `spec.preregisteredClientSecret`. */
  field: string;
  name: string;
  key: string;
}

/** Thrown for a value the schema walk cannot map; `field` is the resource path. */
export class FieldError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * A resource value (camelCase, secret refs) → gateway config value (snake_case, `${VAR}` for secrets).
 * `secretVariable` names the environment variable for a secret reference. Strings may not contain `${`:
 * the gateway interpolates its own environment into the YAML, so a resource author could otherwise read
 * the gateway's secrets into, say, a server description.
 */
export function toGatewayValue(
  value: unknown,
  schema: JsonSchema,
  field: string,
  secretVariable: (reference: SecretReference) => string,
): unknown {
  if (Array.isArray(value)) {
    return value.map((item, index) =>
      toGatewayValue(item, schema.items ?? {}, `${field}[${index}]`, secretVariable),
    );
  }
  if (typeof value === "string") {
    if (value.includes("${")) {
      throw new FieldError(field, "must not contain ${...}: take secrets from a Secret with secretKeyRef");
    }
    return value;
  }
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(record)) {
    const childField = `${field}.${key}`;
    const declared = schema.properties?.[key];
    if (declared === undefined) {
      if (typeof schema.additionalProperties === "object") {
        out[key] = toGatewayValue(child, schema.additionalProperties, childField, secretVariable);
        continue;
      }
      throw new FieldError(childField, "is not a known field");
    }
    const snakeKey = camelToSnake(key);
    if (
      declared === secretKeyRefSchema ||
      (declared.required?.[0] === "secretKeyRef" && isSecretField(snakeKey))
    ) {
      const ref = (child as { secretKeyRef?: { name?: unknown; key?: unknown } } | null)?.secretKeyRef;
      if (typeof ref?.name !== "string" || typeof ref.key !== "string") {
        throw new FieldError(childField, "must be { secretKeyRef: { name, key } }");
      }
      out[snakeKey] = `\${${secretVariable({ field: childField, name: ref.name, key: ref.key })}}`;
      continue;
    }
    out[snakeKey] = toGatewayValue(child, declared, childField, secretVariable);
  }
  return out;
}
