import type { JsonSchema } from "./json-schema.ts";
import { assertRoundTrip, camelToSnake } from "./key-case.ts";
import { isSecretField, isSecretMap } from "./secret-fields.ts";

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

/** A header value: written in the resource (`value`, for what is not a secret) or read from a Secret. */
export const valueOrSecretSchema: JsonSchema = {
  type: "object",
  description:
    "Either { value: <text> } for what is not a secret, or { secretKeyRef: { name, key } }, read from a Secret in the gateway's namespace and never copied into the ConfigMap",
  properties: {
    value: { type: "string", description: "The header value, for what is not a secret" },
    secretKeyRef: secretKeyRefSchema.properties?.secretKeyRef as JsonSchema,
  },
};

export function toResourceSchema(node: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...node };
  if (node.properties) {
    const properties: Record<string, JsonSchema> = {};
    for (const [snakeKey, child] of Object.entries(node.properties)) {
      const camelKey = assertRoundTrip(snakeKey);
      if (isSecretField(snakeKey) && child.type === "string") {
        properties[camelKey] = {
          ...secretKeyRefSchema,
          description: `${child.description ?? snakeKey}. ${secretKeyRefSchema.description}`,
        };
      } else if (isSecretMap(snakeKey) && typeof child.additionalProperties === "object") {
        properties[camelKey] = {
          ...child,
          description: `${child.description ?? snakeKey}. Each value: { value } or { secretKeyRef }`,
          additionalProperties: valueOrSecretSchema,
        };
      } else properties[camelKey] = toResourceSchema(child);
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
      if (schema.additionalProperties === valueOrSecretSchema) {
        // A header map: the key stays as written; the value is given, or comes from a Secret.
        const given = (child as { value?: unknown } | null)?.value;
        const hasRef = (child as { secretKeyRef?: unknown } | null)?.secretKeyRef !== undefined;
        if (typeof given === "string" && !hasRef) {
          out[key] = toGatewayValue(given, {}, `${childField}.value`, secretVariable);
        } else if (given === undefined && hasRef) {
          out[key] = secretValue(child, childField, secretVariable);
        } else {
          throw new FieldError(
            childField,
            "must be { value: <text> } or { secretKeyRef: { name, key } }, not both",
          );
        }
        continue;
      }
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
      out[snakeKey] = secretValue(child, childField, secretVariable);
      continue;
    }
    out[snakeKey] = toGatewayValue(child, declared, childField, secretVariable);
  }
  return out;
}

/** `{ secretKeyRef: { name, key } }` → `${VAR}`, VAR filled from that Secret key in the gateway's environment. */
function secretValue(
  value: unknown,
  field: string,
  secretVariable: (reference: SecretReference) => string,
): string {
  const ref = (value as { secretKeyRef?: { name?: unknown; key?: unknown } } | null)?.secretKeyRef;
  if (typeof ref?.name !== "string" || typeof ref.key !== "string") {
    throw new FieldError(field, "must be { secretKeyRef: { name, key } }");
  }
  return `\${${secretVariable({ field, name: ref.name, key: ref.key })}}`;
}
