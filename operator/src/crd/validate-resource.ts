import { nearestKey } from "@svc-mcp/gateway/config";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { JsonSchema } from "../api/json-schema.ts";
import type { Kind } from "../api/names.ts";
import { resourceSchema } from "./build-crds.ts";

// Checks a resource against its CRD schema with ajv, as the API server would on `kubectl apply`, so
// `svc-operator render -f DIR` and the tests catch the same mistakes without a cluster. (CEL rules in
// x-kubernetes-validations are not evaluated here; the render checks the one rule we have itself.)

// ajv-formats is CommonJS; under Node's ESM interop the plugin function is its default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let ajv: Ajv | undefined;
const compiled = new Map<Kind, ValidateFunction>();

function validatorFor(kind: Kind): ValidateFunction {
  let validate = compiled.get(kind);
  if (!validate) {
    if (!ajv) {
      ajv = new Ajv({ allErrors: true, strict: true, verbose: true });
      addFormats(ajv);
      for (const keyword of [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
      ]) {
        ajv.addKeyword(keyword);
      }
    }
    validate = ajv.compile(closed(resourceSchema(kind)));
    compiled.set(kind, validate);
  }
  return validate;
}

/** kubectl's strict field validation rejects unknown fields (the API server would otherwise prune them
 *  silently); ajv gets the same rule as additionalProperties: false on every declared object. */
function closed(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (schema.properties) {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties).map(([key, child]) => [key, closed(child)]),
    );
    if (schema.additionalProperties === undefined && !schema["x-kubernetes-preserve-unknown-fields"]) {
      out.additionalProperties = false;
    }
  }
  if (schema.items) out.items = closed(schema.items);
  if (typeof schema.additionalProperties === "object")
    out.additionalProperties = closed(schema.additionalProperties);
  return out;
}

function describe(error: ErrorObject): string {
  const path = error.instancePath
    .replace(/^\//, "")
    .replace(/\/(\d+)(?=\/|$)/g, "[$1]")
    .replace(/\//g, ".");
  const where = path === "" ? "(resource)" : path;
  if (error.keyword === "additionalProperties") {
    const field = String(error.params.additionalProperty);
    // `verbose` gives the schema of the object at fault: its declared fields are the candidates.
    const known = Object.keys((error.parentSchema as JsonSchema | undefined)?.properties ?? {});
    const suggestion = nearestKey(field, known);
    return `${where}: unknown field "${field}"${suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`}`;
  }
  if (error.keyword === "enum") {
    return `${where}: must be one of: ${(error.params.allowedValues as unknown[]).join(", ")}`;
  }
  return `${where}: ${error.message ?? "is invalid"}`;
}

/** Problems as `spec.field: message` lines; empty when the resource is valid. */
export function validateResource(kind: Kind, resource: unknown): string[] {
  const validate = validatorFor(kind);
  if (validate(resource)) return [];
  return (validate.errors ?? []).map(describe);
}
