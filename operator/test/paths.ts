import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const operatorDir = join(dirname(fileURLToPath(import.meta.url)), "..");
export const repoRoot = join(operatorDir, "..");
export const examplesDir = join(operatorDir, "examples");
