import type { Plugin } from "esbuild";
import { FRAMEWORK_DIR, FRAMEWORK_ENTRIES, RUNTIME_PACKAGES } from "./framework-location.ts";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const FRAMEWORK_ENTRY_FILTER = new RegExp(
  `^(${Object.keys(FRAMEWORK_ENTRIES).map(escapeRegExp).join("|")})$`,
);

/** esbuild plugin: the framework package, its `/auth` module, `svc:runtime` and the runtime packages resolve to the framework's own copies. */
export function frameworkResolvePlugin(): Plugin {
  return {
    name: "svc-framework-resolve",
    setup(build) {
      build.onResolve({ filter: FRAMEWORK_ENTRY_FILTER }, (args) => ({ path: FRAMEWORK_ENTRIES[args.path] }));
      build.onResolve({ filter: RUNTIME_PACKAGES }, async (args) => {
        if (args.resolveDir.startsWith(FRAMEWORK_DIR) || args.pluginData === "svc") return undefined;
        const result = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: FRAMEWORK_DIR,
          pluginData: "svc",
        });
        return result.errors.length > 0 ? { errors: result.errors } : { path: result.path };
      });
    },
  };
}
