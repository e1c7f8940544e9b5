import { z } from "zod";
import { gatewayConfigSchema } from "./schema.ts";

export const JSON_SCHEMA_ID = "https://svc.dev/schemas/svc-gateway/1.0/config.json";
const INTERPOLATION_REF = "#/$defs/interpolation";

/**
 * The configuration as a JSON Schema (draft 2020-12) for editors (yaml-language-server). It describes what a user
 * writes: defaulted fields are optional, and any scalar may instead be a `${VAR}` / `${VAR:default}` reference.
 * Rules that relate fields (conditional requirements, unique names) are enforced by `svc-gateway validate`.
 */
export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(gatewayConfigSchema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  });
  const { $schema, ...rest } = schema as Record<string, unknown>;
  return {
    $schema,
    $id: JSON_SCHEMA_ID,
    title: "svc-gateway configuration",
    ...(allowInterpolation(rest) as Record<string, unknown>),
    $defs: {
      interpolation: {
        type: "string",
        pattern: "\\$\\{[A-Za-z_][A-Za-z0-9_]*(:[^}]*)?\\}",
        description: "An environment variable reference, resolved when the gateway loads the file",
      },
    },
  };
}

/** True for the `${VAR}` alternative that allowInterpolation adds beside a scalar's own schema. */
export function isInterpolationAlternative(schema: unknown): boolean {
  return (schema as { $ref?: string }).$ref === INTERPOLATION_REF;
}

const SCALAR_TYPES = new Set(["string", "integer", "number", "boolean"]);

function allowInterpolation(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowInterpolation);
  if (typeof node !== "object" || node === null) return node;
  const entries = Object.entries(node).map(([key, value]) => [key, allowInterpolation(value)] as const);
  const schema = Object.fromEntries(entries) as Record<string, unknown>;
  if (typeof schema.type !== "string" || !SCALAR_TYPES.has(schema.type) || schema.const !== undefined)
    return schema;
  const { description, default: fallback, ...own } = schema;
  return {
    anyOf: [own, { $ref: INTERPOLATION_REF }],
    ...(description === undefined ? {} : { description }),
    ...(fallback === undefined ? {} : { default: fallback }),
  };
}
