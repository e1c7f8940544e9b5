import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Reads `<project>/.env` for dev runs (KEY=value lines, # comments, optional quotes). Values already in the
 * environment win. Nothing here is ever written into dist/.
 */
export function loadEnvFile(projectDir: string): { values: Record<string, string>; file?: string } {
  const file = join(projectDir, ".env");
  if (!existsSync(file)) return { values: {} };
  const values: Record<string, string> = {};
  readFileSync(file, "utf8")
    .split(/\r?\n/)
    .forEach((line, index) => {
      const trimmed = line.trim();
      if (trimmed === "" || trimmed.startsWith("#")) return;
      const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed);
      if (!match) throw new Error(`${file}:${index + 1}: expected KEY=value`);
      const [, key, raw = ""] = match;
      const quoted = /^(['"])(.*)\1$/.exec(raw);
      values[key as string] = quoted ? (quoted[2] ?? "") : raw.replace(/\s+#.*$/, "");
    });
  return { values, file };
}

/** The environment for a dev server: the process environment over the .env values. */
export function devEnvironment(projectDir: string): Record<string, string | undefined> {
  return { ...loadEnvFile(projectDir).values, ...process.env };
}
