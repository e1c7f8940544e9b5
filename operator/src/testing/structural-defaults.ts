import type { JsonSchema } from "../api/json-schema.ts";
import { isObject, type Json, type JsonObject } from "./merge.ts";

// Defaulting of a custom resource from its structural schema, as the API server does on every create and
// update (and on read): a property with a `default` that the object does not set gets that default, walking
// into the objects, list items and map values the object has. A `null` where the schema is not nullable
// counts as unset. Defaults are applied top-down, so a defaulted object gets its own properties' defaults.

function defaultsFor(schema: JsonSchema | undefined, value: Json): Json {
  if (!schema) return value;
  if (isObject(value)) {
    const result: JsonObject = { ...value };
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      const unset = result[key] === undefined || (result[key] === null && !child.nullable);
      if (unset && child.default !== undefined) result[key] = structuredClone(child.default as Json);
      if (result[key] !== undefined) result[key] = defaultsFor(child, result[key] as Json);
    }
    if (typeof schema.additionalProperties === "object") {
      const declared = new Set(Object.keys(schema.properties ?? {}));
      for (const [key, child] of Object.entries(result)) {
        if (!declared.has(key)) result[key] = defaultsFor(schema.additionalProperties, child);
      }
    }
    return result;
  }
  if (Array.isArray(value) && schema.items) return value.map((item) => defaultsFor(schema.items, item));
  return value;
}

export function applyStructuralDefaults(schema: JsonSchema, object: JsonObject): JsonObject {
  return defaultsFor(schema, object) as JsonObject;
}
