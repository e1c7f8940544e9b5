import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { displayPath } from "../project/naming.ts";

/** Files whose change makes dist/ stale. .env is not one: it is read at run time, never built in. */
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|json)$/;
const SKIP_DIRS = new Set(["dist", "node_modules", ".svc", ".git"]);

async function walk(dir: string, root: string, out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith("."))
        await walk(join(dir, entry.name), root, out);
    } else if (SOURCE.test(entry.name)) {
      out.push(join(dir, entry.name));
    }
  }
}

/** Content hash per source file (project-relative path → sha256), for the manifest and the staleness check. */
export async function hashSources(projectDir: string): Promise<Record<string, string>> {
  const files: string[] = [];
  await walk(projectDir, projectDir, files);
  const hashes: Record<string, string> = {};
  for (const file of files.sort()) {
    const digest = createHash("sha256")
      .update(await readFile(file))
      .digest("hex");
    hashes[displayPath(relative(projectDir, file))] = digest;
  }
  return hashes;
}

/** Why the recorded sources differ from the current ones (first few differences), or undefined when equal. */
export function sourceChanges(
  recorded: Record<string, string>,
  current: Record<string, string>,
): string | undefined {
  const changes: string[] = [];
  for (const [file, hash] of Object.entries(current)) {
    if (!(file in recorded)) changes.push(`${file} added`);
    else if (recorded[file] !== hash) changes.push(`${file} changed`);
  }
  for (const file of Object.keys(recorded)) if (!(file in current)) changes.push(`${file} removed`);
  if (changes.length === 0) return undefined;
  return changes.length > 3
    ? `${changes.slice(0, 3).join(", ")} and ${changes.length - 3} more`
    : changes.join(", ");
}
