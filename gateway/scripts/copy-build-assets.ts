// Files the compiled gateway reads at run time beside its modules, which tsc does not emit: copied from src/ into
// dist/ at the same relative path, so `new URL("./model/...", import.meta.url)` finds them in both.
import { cpSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ASSETS = ["firewall/model"];

const root = new URL("../", import.meta.url);
for (const asset of ASSETS) {
  cpSync(fileURLToPath(new URL(`src/${asset}`, root)), fileURLToPath(new URL(`dist/${asset}`, root)), {
    recursive: true,
  });
}
