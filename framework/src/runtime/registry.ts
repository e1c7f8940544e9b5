import type { PromptComponent } from "../define/prompt.ts";
import type { ResourceComponent } from "../define/resource.ts";
import type { ToolComponent } from "../define/tool.ts";
import type { ComponentKind } from "../project/discover.ts";

/** One component module as the generated entry hands it over (the module loaded lazily). */
export interface ComponentEntry {
  kind: ComponentKind;
  file: string;
  defaultName: string;
  load: () => Promise<Record<string, unknown>>;
}

export interface LoadedComponent<C> {
  name: string;
  file: string;
  component: C;
}

export interface Registry {
  tools: LoadedComponent<ToolComponent>[];
  resources: LoadedComponent<ResourceComponent>[];
  prompts: LoadedComponent<PromptComponent>[];
}

const HELPER: Record<ComponentKind, string> = {
  tool: "defineTool",
  resource: "defineResource",
  prompt: "definePrompt",
};
const NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function isComponent(
  value: unknown,
  kind: ComponentKind,
): value is { kind: ComponentKind; definition: object } {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { kind?: unknown }).kind === kind &&
    typeof (value as { definition?: unknown }).definition === "object"
  );
}

const KINDS: ComponentKind[] = ["tool", "resource", "prompt"];

/** Says what a module exports instead of a default definition of its folder's kind, and what to do. */
function whyNotUsable(kind: ComponentKind, module: Record<string, unknown>): string {
  const expected = `a ${kind} module must \`export default ${HELPER[kind]}({...})\``;
  const otherKind = KINDS.find((k) => k !== kind && isComponent(module.default, k));
  if (otherKind)
    return `${expected}, but its default export is a ${otherKind} (move the file to ${otherKind}s/)`;
  const named = Object.entries(module).find(
    ([name, value]) => name !== "default" && isComponent(value, kind),
  );
  if (named)
    return `${expected}, but the definition is exported as '${named[0]}' (make it the default export)`;
  return `${expected} (${Object.keys(module).length === 0 ? "it exports nothing" : "its default export is not one"})`;
}

/** Problems with one definition's own fields (the name and duplicates are checked across modules). */
function definitionProblems(kind: ComponentKind, definition: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (typeof definition.description !== "string" || definition.description.trim() === "") {
    problems.push("missing description (a non-empty `description` string is required)");
  }
  if (kind === "tool" && typeof definition.handler !== "function")
    problems.push("missing `handler` function");
  if (kind === "resource") {
    if (typeof definition.uri !== "string" || !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(definition.uri)) {
      problems.push("missing or invalid `uri` (e.g. `docs://readme` or `users://{id}/profile`)");
    }
    if (typeof definition.read !== "function") problems.push("missing `read` function");
  }
  if (kind === "prompt" && typeof definition.render !== "function")
    problems.push("missing `render` function");
  return problems;
}

/**
 * Loads every component module and checks it. Returns every problem at once, each naming the file(s), so a
 * build reports them together; the runtime refuses to start on any.
 */
export async function loadRegistry(
  entries: ComponentEntry[],
): Promise<{ registry: Registry; problems: string[] }> {
  const registry: Registry = { tools: [], resources: [], prompts: [] };
  const problems: string[] = [];
  const byName = new Map<string, string[]>();
  const byUri = new Map<string, string[]>();
  for (const entry of entries) {
    let module: Record<string, unknown>;
    try {
      module = await entry.load();
    } catch (error) {
      problems.push(`${entry.file}: failed to load: ${(error as Error).message}`);
      continue;
    }
    const exported = module.default;
    if (!isComponent(exported, entry.kind)) {
      problems.push(`${entry.file}: nothing usable exported: ${whyNotUsable(entry.kind, module)}`);
      continue;
    }
    const definition = exported.definition as Record<string, unknown>;
    const own = definitionProblems(entry.kind, definition);
    for (const problem of own) problems.push(`${entry.file}: ${problem}`);
    const name = typeof definition.name === "string" ? definition.name : entry.defaultName;
    if (!NAME.test(name))
      problems.push(`${entry.file}: invalid name '${name}' (use 1-128 of A-Z a-z 0-9 _ . -)`);
    const key = `${entry.kind}:${name}`;
    byName.set(key, [...(byName.get(key) ?? []), entry.file]);
    if (entry.kind === "resource" && typeof definition.uri === "string") {
      byUri.set(definition.uri, [...(byUri.get(definition.uri) ?? []), entry.file]);
    }
    if (own.length > 0) continue;
    const loaded = { name, file: entry.file, component: exported };
    if (entry.kind === "tool") registry.tools.push(loaded as LoadedComponent<ToolComponent>);
    else if (entry.kind === "resource") registry.resources.push(loaded as LoadedComponent<ResourceComponent>);
    else registry.prompts.push(loaded as LoadedComponent<PromptComponent>);
  }
  for (const [key, files] of byName) {
    if (files.length > 1) {
      const [kind, name] = key.split(/:(.*)/);
      problems.push(`duplicate ${kind} name '${name}' in ${files.join(", ")} (set \`name\` in one of them)`);
    }
  }
  for (const [uri, files] of byUri) {
    if (files.length > 1) problems.push(`duplicate resource URI '${uri}' in ${files.join(", ")}`);
  }
  return { registry, problems };
}
