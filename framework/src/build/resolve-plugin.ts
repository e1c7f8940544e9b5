import { isBuiltin } from "node:module";
import { pathToFileURL } from "node:url";
import type { Plugin } from "esbuild";
import {
  FRAMEWORK_DIR,
  FRAMEWORK_ENTRIES,
  RUNTIME_PACKAGES,
  resolveFromFramework,
} from "./framework-location.ts";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const FRAMEWORK_ENTRY_FILTER = new RegExp(
  `^(${Object.keys(FRAMEWORK_ENTRIES).map(escapeRegExp).join("|")})$`,
);
/** A package import: neither relative nor absolute (esbuild filters have no lookahead: `svc:` is checked below). */
const BARE = /^[^./]/;

/**
 * esbuild plugin: the framework package, its `/auth` module, `svc:runtime` and the runtime packages resolve to
 * the framework's own copies, so the project and the runtime share one of each. With `externalPackages` (dev
 * builds) they stay imports, by the exact URL Node gives the framework, and every other package stays an
 * import Node resolves from the project's node_modules: only the project's own files are bundled.
 */
export function frameworkResolvePlugin(options: { externalPackages: boolean }): Plugin {
  return {
    name: "svc-framework-resolve",
    setup(build) {
      build.onResolve({ filter: FRAMEWORK_ENTRY_FILTER }, (args) => {
        const path = FRAMEWORK_ENTRIES[args.path] as string;
        return options.externalPackages ? { path: pathToFileURL(path).href, external: true } : { path };
      });
      build.onResolve({ filter: RUNTIME_PACKAGES }, async (args) => {
        if (args.resolveDir.startsWith(FRAMEWORK_DIR) || args.pluginData === "svc") return undefined;
        if (options.externalPackages) return { path: resolveFromFramework(args.path), external: true };
        const result = await build.resolve(args.path, {
          kind: args.kind,
          resolveDir: FRAMEWORK_DIR,
          pluginData: "svc",
        });
        return result.errors.length > 0 ? { errors: result.errors } : { path: result.path };
      });
      if (options.externalPackages) {
        build.onResolve({ filter: BARE }, (args) =>
          isBuiltin(args.path) || args.path.startsWith("svc:") || args.pluginData === "svc"
            ? undefined
            : { path: args.path, external: true },
        );
      }
    },
  };
}
