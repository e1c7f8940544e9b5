import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Golden files live in test/golden/. UPDATE_GOLDEN=1 rewrites them; review the diff before committing.
export const goldenDir = join(dirname(fileURLToPath(import.meta.url)), "golden");

export function expectGolden(name: string, actual: string): { expected: string; actual: string } {
  const path = join(goldenDir, name);
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, actual);
  }
  return { expected: readFileSync(path, "utf8"), actual };
}
