import { readFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { parse } from "yaml";
import {
  JSON_SCHEMA_FILE,
  README_FILE,
  renderJsonSchema,
  withFieldReference,
} from "../../scripts/config-docs.ts";
import { configJsonSchema } from "../../src/config/json-schema.ts";
import { expectValid } from "./helpers.ts";

const STALE = "is out of date with the zod schema: run `npm run generate -w gateway` and commit the result";

describe("generated from the schema", () => {
  test(`gateway/schema/svc-gateway.schema.json ${STALE}`, async () => {
    expect(await readFile(JSON_SCHEMA_FILE, "utf8"), STALE).toBe(renderJsonSchema());
  });

  test(`the field reference in gateway/README.md ${STALE}`, async () => {
    const readme = await readFile(README_FILE, "utf8");
    expect(readme, STALE).toBe(withFieldReference(readme));
  });
});

describe("examples/full.yaml", () => {
  const text = readFile(new URL("../../examples/full.yaml", import.meta.url), "utf8");

  test("validates", async () => {
    expect(expectValid(await text, {}).servers).toHaveLength(3);
  });

  test("uses every field the schema defines", async () => {
    const used = new Set(fieldPaths(parse(await text)));
    const missing = schemaPaths(configJsonSchema()).filter((p) => !used.has(p));
    expect(missing).toEqual([]);
  });
});

/** `servers[].capability_overrides[].capability`-style paths of every key in a parsed document. */
function fieldPaths(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item) => fieldPaths(item, `${prefix}[]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return [path, ...fieldPaths(child, path)];
  });
}

type Node = { properties?: Record<string, Node>; items?: Node; anyOf?: Node[]; type?: string };

/** The same style of paths for every property in the JSON Schema (free-form maps such as headers stop there). */
function schemaPaths(schema: Node, prefix = ""): string[] {
  const node = schema.anyOf?.find((option) => option.type === "object" || option.type === "array") ?? schema;
  if (node.type === "array" && node.items) return schemaPaths(node.items, `${prefix}[]`);
  return Object.entries(node.properties ?? {}).flatMap(([key, child]) => {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    return [path, ...schemaPaths(child, path)];
  });
}
