import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { displayPath, nameFromPath } from "./naming.ts";

export type ComponentKind = "tool" | "resource" | "prompt";

export const COMPONENT_DIRS: Record<ComponentKind, string> = {
  tool: "tools",
  resource: "resources",
  prompt: "prompts",
};

export interface ComponentFile {
  kind: ComponentKind;
  /** Project-relative, forward slashes: `tools/payments/charge.ts`. */
  file: string;
  absolutePath: string;
  /** Name from the path (the definition may override it). */
  defaultName: string;
}

export interface ProjectFiles {
  components: ComponentFile[];
  auth?: string;
  health?: string;
  readiness?: string;
}

const SOURCE = /\.(ts|mts|js|mjs)$/;

/** Skipped inside component folders: helpers (`_x.ts`), tests and type declarations. README "Shared code". */
function isComponentFile(name: string): boolean {
  return SOURCE.test(name) && !name.startsWith("_") && !/\.(test|spec|d)\.(ts|mts|js|mjs)$/.test(name);
}

async function walk(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith("_")) files.push(...(await walk(full)));
    } else if (isComponentFile(entry.name)) files.push(full);
  }
  return files;
}

function rootFile(projectDir: string, stem: string): string | undefined {
  for (const ext of [".ts", ".mts", ".js", ".mjs"]) {
    const file = join(projectDir, stem + ext);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/** Finds the project's component modules and its optional auth/health/readiness files. */
export async function discoverProject(projectDir: string): Promise<ProjectFiles> {
  const components: ComponentFile[] = [];
  for (const [kind, folder] of Object.entries(COMPONENT_DIRS) as [ComponentKind, string][]) {
    const dir = join(projectDir, folder);
    if (!existsSync(dir)) continue;
    for (const absolutePath of await walk(dir)) {
      components.push({
        kind,
        file: displayPath(relative(projectDir, absolutePath)),
        absolutePath,
        defaultName: nameFromPath(relative(dir, absolutePath)),
      });
    }
  }
  const files: ProjectFiles = { components };
  const auth = rootFile(projectDir, "auth");
  const health = rootFile(projectDir, "health");
  const readiness = rootFile(projectDir, "readiness");
  if (auth) files.auth = auth;
  if (health) files.health = health;
  if (readiness) files.readiness = readiness;
  return files;
}
