import { sep } from "node:path";

/**
 * The naming rule (README "Naming"): the path inside tools/, resources/ or prompts/, without the extension,
 * folders joined with "_"; a folder's index.ts takes the folder's name; characters outside [A-Za-z0-9_-]
 * become "_". `tools/payments/charge.ts` → `payments_charge`. A definition's `name` overrides it.
 */
export function nameFromPath(relativePath: string): string {
  const segments = relativePath.split(/[\\/]/).filter((s) => s.length > 0);
  const last = segments.pop() ?? "";
  const stem = last.replace(/\.(ts|mts|js|mjs)$/, "");
  if (stem !== "index" || segments.length === 0) segments.push(stem);
  return segments.map((s) => s.replace(/[^A-Za-z0-9_-]/g, "_")).join("_");
}

/** Project-relative path with forward slashes, for messages and the manifest. */
export function displayPath(relativePath: string): string {
  return relativePath.split(sep).join("/");
}
