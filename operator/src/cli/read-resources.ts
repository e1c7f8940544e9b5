import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Resource } from "../render/resources.ts";

/** Every YAML document in a file, or in the .yaml/.yml files of a directory (sorted, not recursive). A
 *  file that cannot be read or parsed, and a document without apiVersion, kind or metadata.name, are all
 *  reported at once in one error, one line each. */
export function readResources(path: string): Resource[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((name) => /\.ya?ml$/.test(name))
        .sort()
        .map((name) => join(path, name))
    : [path];
  const resources: Resource[] = [];
  const problems: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message}`);
      continue;
    }
    for (const [index, document] of parseAllDocuments(text).entries()) {
      const where = `${file} (document ${index + 1})`;
      if (document.errors.length > 0) {
        problems.push(`${where}: ${document.errors.map((error) => error.message.split("\n")[0]).join("; ")}`);
        continue;
      }
      const value: unknown = document.toJS();
      if (value === null || value === undefined) continue;
      const candidate = value as Partial<Resource>;
      const missing = [
        typeof candidate.apiVersion !== "string" ? "apiVersion" : undefined,
        typeof candidate.kind !== "string" ? "kind" : undefined,
        typeof candidate.metadata?.name !== "string" ? "metadata.name" : undefined,
      ].filter((field) => field !== undefined);
      if (missing.length > 0) {
        problems.push(`${where}: missing ${missing.join(", ")}`);
        continue;
      }
      resources.push(candidate as Resource);
    }
  }
  if (problems.length > 0)
    throw new Error(`${problems.length} problem(s):\n${problems.map((p) => `  ${p}`).join("\n")}`);
  return resources;
}
