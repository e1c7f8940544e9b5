import { existsSync } from "node:fs";
import { cp, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FRAMEWORK_PACKAGE, FRAMEWORK_VERSION } from "../build/framework-location.ts";
import { parseCommandArgs, UsageError } from "./args.ts";

export const usage = "init DIR";
export const summary = "scaffold a working project in DIR";

const help = `Usage: svc init DIR

Creates DIR with a working project: package.json (the framework as a dependency, Node 24 pinned, scripts
dev/build/start), svc.json, one tool, one resource, one prompt, health.ts, readiness.ts, a commented auth.ts, a
Dockerfile and an McpServer manifest (mcpserver.yaml) for the svc operator. DIR must not exist or be empty.
Then: cd DIR && npm install && npm run dev.

Options:
  -h, --help      show this help
`;

const TEMPLATE = fileURLToPath(new URL("../../templates/project", import.meta.url));
/**
 * Stored under another name so packaging and the repository's own tools leave them alone: npm drops .gitignore
 * from a package, and a package.json in the framework's tree would be taken for a package of its own.
 */
const RENAMED: Record<string, string> = {
  _gitignore: ".gitignore",
  _dockerignore: ".dockerignore",
  "_package.json": "package.json",
};

/** A Kubernetes- and npm-friendly name from the directory name. */
export function projectName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
  return name || "mcp-server";
}

/** Fills the template's placeholders: the project's name and the framework's package name and version. */
async function substitute(dir: string, values: Record<string, string>): Promise<void> {
  const placeholder = new RegExp(Object.keys(values).join("|"), "g");
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, "utf8");
    const filled = text.replace(placeholder, (key) => values[key] ?? key);
    if (filled !== text) await writeFile(file, filled);
  }
}

export async function run(argv: string[]): Promise<number> {
  const { positionals, help: wantsHelp } = parseCommandArgs(argv, {});
  if (wantsHelp) {
    process.stdout.write(help);
    return 0;
  }
  const [target, extra] = positionals;
  if (!target) throw new UsageError("a directory is required: svc init DIR");
  if (extra) throw new UsageError(`unexpected argument '${extra}'`);
  const dir = resolve(target);
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    process.stderr.write(`svc init: ${dir} exists and is not empty; choose a new directory\n`);
    return 1;
  }
  await cp(TEMPLATE, dir, { recursive: true });
  for (const [stored, real] of Object.entries(RENAMED)) {
    if (existsSync(join(dir, stored))) await rename(join(dir, stored), join(dir, real));
  }
  const name = projectName(dir);
  await substitute(dir, {
    __PROJECT_NAME__: name,
    __FRAMEWORK_PACKAGE__: FRAMEWORK_PACKAGE,
    __FRAMEWORK_VERSION__: FRAMEWORK_VERSION,
  });
  process.stdout.write(`Created ${name} in ${dir}\n\nNext:\n  cd ${target}\n  npm install\n  npm run dev\n`);
  return 0;
}
