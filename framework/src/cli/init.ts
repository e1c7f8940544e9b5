import { existsSync } from "node:fs";
import { cp, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCommandArgs, UsageError } from "./args.ts";

export const usage = "init DIR";
export const summary = "scaffold a working project in DIR";

const help = `Usage: svc init DIR

Creates DIR with a working project: svc.json, one tool, one resource, one prompt, health.ts, readiness.ts, a
commented auth.ts, a Dockerfile and an McpServer manifest (mcpserver.yaml) for the svc operator. DIR must not
exist or be empty. Then: cd DIR && svc build && svc run.

Options:
  -h, --help      show this help
`;

const TEMPLATE = fileURLToPath(new URL("../../templates/project", import.meta.url));
/** Stored without the dot so packaging and the repository's own ignore rules leave them alone. */
const DOTFILES: Record<string, string> = { _gitignore: ".gitignore", _dockerignore: ".dockerignore" };

/** A Kubernetes- and npm-friendly name from the directory name. */
export function projectName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
  return name || "mcp-server";
}

async function substitute(dir: string, name: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, "utf8");
    if (text.includes("__PROJECT_NAME__")) await writeFile(file, text.replaceAll("__PROJECT_NAME__", name));
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
  for (const [stored, real] of Object.entries(DOTFILES)) {
    if (existsSync(join(dir, stored))) await rename(join(dir, stored), join(dir, real));
  }
  const name = projectName(dir);
  await substitute(dir, name);
  process.stdout.write(`Created ${name} in ${dir}\n\nNext:\n  cd ${target}\n  svc build\n  svc run\n`);
  return 0;
}
