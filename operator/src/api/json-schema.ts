import { z } from "zod";

// JSON Schema as Kubernetes accepts it in a CRD (OpenAPI v3, structural): the subset the operator emits.
export interface JsonSchema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  items?: JsonSchema;
  enum?: (string | number | boolean | null)[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  nullable?: boolean;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-validations"?: { rule: string; message: string }[];
  [other: string]: unknown;
}

// Formats the Kubernetes API server validates; anything else would only earn a warning, so it is dropped.
const KUBERNETES_FORMATS = new Set([
  "uri",
  "uuid",
  "email",
  "hostname",
  "date-time",
  "date",
  "byte",
  "int32",
  "int64",
]);
const SAFE_INTEGER = Number.MAX_SAFE_INTEGER;

/** Rewrites what z.toJSONSchema emits into a structural schema: no defaults (the gateway applies them, in
 *  one place), no `$schema`, no `additionalProperties: false` beside `properties` (Kubernetes prunes unknown
 *  fields instead), only formats Kubernetes knows, and no unions (they cannot be structural). */
export function toStructural(node: Record<string, unknown>, where: string): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case "$schema":
      case "default":
      case "propertyNames":
      case "id":
        break;
      case "anyOf":
      case "oneOf":
      case "allOf":
      case "not":
      case "$ref":
        throw new Error(`${where}: "${key}" cannot be expressed in a structural CRD schema`);
      case "const":
        out.enum = [value as string];
        break;
      case "format":
        if (KUBERNETES_FORMATS.has(String(value))) out.format = String(value);
        break;
      case "minimum":
      case "maximum":
        if (Math.abs(Number(value)) < SAFE_INTEGER) out[key] = Number(value);
        break;
      case "properties": {
        const properties: Record<string, JsonSchema> = {};
        for (const [name, child] of Object.entries(value as Record<string, Record<string, unknown>>)) {
          properties[name] = toStructural(child, `${where}.${name}`);
        }
        out.properties = properties;
        break;
      }
      case "items":
        out.items = toStructural(value as Record<string, unknown>, `${where}[]`);
        break;
      case "additionalProperties":
        // `{}` (anything) is what a loose object emits; x-kubernetes-preserve-unknown-fields says it instead.
        if (typeof value === "object" && value !== null && Object.keys(value).length > 0) {
          out.additionalProperties = toStructural(value as Record<string, unknown>, `${where}.*`);
        }
        break;
      default:
        out[key] = value;
    }
  }
  if (out.properties && out.type === undefined) out.type = "object";
  if (out.type === undefined && !out["x-kubernetes-preserve-unknown-fields"]) {
    throw new Error(`${where}: a structural CRD schema needs a type here`);
  }
  return out;
}

/** A zod schema as a structural JSON schema: what a user may write (input side, before defaults). */
export function zodToStructural(schema: z.ZodType, where: string): JsonSchema {
  const raw = z.toJSONSchema(schema, { io: "input", target: "openapi-3.0", unrepresentable: "throw" });
  return toStructural(raw as Record<string, unknown>, where);
}
