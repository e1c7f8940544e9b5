import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Resource } from "../render/resources.ts";

/** Every YAML document in a file, or in the .yaml/.yml files of a directory (sorted, not recursive). */
export function readResources(path: string): Resource[] {
  const files = statSync(path).isDirectory()
    ? readdirSync(path)
        .filter((name) => /\.ya?ml$/.test(name))
        .sort()
        .map((name) => join(path, name))
    : [path];
  const resources: Resource[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(readFileSync(file, "utf8"))) {
      if (document.errors.length > 0) {
        throw new Error(`${file}: ${document.errors.map((error) => error.message).join("; ")}`);
      }
      const value: unknown = document.toJS();
      if (value === null || value === undefined) continue;
      const candidate = value as Partial<Resource>;
      if (
        typeof candidate.kind !== "string" ||
        typeof candidate.apiVersion !== "string" ||
        typeof candidate.metadata?.name !== "string"
      ) {
        throw new Error(`${file}: every document needs apiVersion, kind and metadata.name`);
      }
      resources.push(candidate as Resource);
    }
  }
  return resources;
}
