// Writes crds/*.yaml and the chart's copy (helm/svc-gateway/crds/) from the zod schemas.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { renderCrdFiles } from "../src/crd/build-crds.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
for (const directory of ["crds", "helm/svc-gateway/crds"]) {
  mkdirSync(join(root, directory), { recursive: true });
  for (const [name, text] of renderCrdFiles()) {
    writeFileSync(join(root, directory, name), text);
    process.stdout.write(`wrote ${directory}/${name}\n`);
  }
}
