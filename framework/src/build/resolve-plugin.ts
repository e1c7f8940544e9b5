import type { Plugin } from "esbuild";
import { FRAMEWORK_DIR, FRAMEWORK_ENTRIES, RUNTIME_PACKAGES } from "./framework-location.ts";

/** esbuild plugin: `svc`, `svc/auth` and the runtime packages resolve to the framework's own copies. */
export function frameworkResolvePlugin(): Plugin {
  return {
    name: "svc-framework-resolve",
    setup(build) {
      build.onResolve({ filter: /^svc(\/auth|:runtime)?$/ }, (args) => {
        const path = FRAMEWORK_ENTRIES[args.path];
        return path ? { path } : undefined;
      });
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
