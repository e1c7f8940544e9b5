import { UriTemplate } from "@modelcontextprotocol/sdk/shared/uriTemplate.js";
import { z } from "zod";
import type { ResourceDefinition } from "../define/resource.ts";
import type { Settings } from "../project/settings.ts";
import type { Registry } from "./registry.ts";
import type { Telemetry } from "./telemetry.ts";

export type NamedResource = ResourceDefinition & { name: string };

/** Everything computed once from the registry and shared by every session's Server. */
export interface Catalog {
  settings: Settings;
  telemetry: Telemetry;
  tools: Map<
    string,
    { list: Record<string, unknown>; validate?: z.ZodObject; run: Registry["tools"][number] }
  >;
  resources: Map<string, NamedResource>;
  templates: { template: UriTemplate; definition: NamedResource }[];
  prompts: Map<
    string,
    { list: Record<string, unknown>; validate: z.ZodObject; run: Registry["prompts"][number] }
  >;
}

function jsonSchemaOf(schema: z.ZodObject): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
}

/** Precomputes list entries, validators and URI templates so per-request work stays small. */
export function buildCatalog(settings: Settings, registry: Registry, telemetry: Telemetry): Catalog {
  const catalog: Catalog = {
    settings,
    telemetry,
    tools: new Map(),
    resources: new Map(),
    templates: [],
    prompts: new Map(),
  };
  for (const tool of registry.tools) {
    const d = tool.component.definition;
    const validate = "inputSchema" in d ? undefined : z.object(d.input ?? {});
    const inputSchema = "inputSchema" in d ? d.inputSchema : jsonSchemaOf(validate as z.ZodObject);
    const list: Record<string, unknown> = { name: tool.name, description: d.description, inputSchema };
    if (d.title) list.title = d.title;
    if (d.annotations) list.annotations = d.annotations;
    if (d.meta) list._meta = d.meta;
    catalog.tools.set(tool.name, validate ? { list, validate, run: tool } : { list, run: tool });
  }
  for (const resource of registry.resources) {
    const d = { ...resource.component.definition, name: resource.name };
    if (/\{[^}]+\}/.test(d.uri)) catalog.templates.push({ template: new UriTemplate(d.uri), definition: d });
    else catalog.resources.set(d.uri, d);
  }
  for (const prompt of registry.prompts) {
    const d = prompt.component.definition;
    const shape = d.arguments ?? {};
    const args = Object.entries(shape).map(([name, schema]) => ({
      name,
      ...(schema.description ? { description: schema.description } : {}),
      required: !schema.safeParse(undefined).success,
    }));
    const list: Record<string, unknown> = { name: prompt.name, description: d.description, arguments: args };
    if (d.title) list.title = d.title;
    if (d.meta) list._meta = d.meta;
    catalog.prompts.set(prompt.name, { list, validate: z.object(shape), run: prompt });
  }
  return catalog;
}

/** The resource a URI names: a fixed URI first, then the first template that matches (with its variables). */
export function findResource(
  catalog: Catalog,
  uri: string,
): { definition: NamedResource; params: Record<string, string> } | undefined {
  const fixed = catalog.resources.get(uri);
  if (fixed) return { definition: fixed, params: {} };
  for (const { template, definition } of catalog.templates) {
    const match = template.match(uri);
    if (match) {
      const params = Object.fromEntries(
        Object.entries(match).map(([k, v]) => [k, Array.isArray(v) ? v.join(",") : String(v)]),
      );
      return { definition, params };
    }
  }
  return undefined;
}

/** One line naming each invalid argument, for error messages. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`).join("; ");
}
