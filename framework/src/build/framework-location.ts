import { readFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The framework package's own directory: the build resolves the runtime packages from here. */
export const FRAMEWORK_DIR = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Where packages a project imports are looked for after the project's own node_modules: the framework's nested
 * node_modules, then the node_modules it is installed in (npm hoists its dependencies there; the package is
 * scoped, so that is two levels up), else the one beside it (this repository's workspace root).
 */
export const FRAMEWORK_NODE_PATHS: string[] = [
  join(FRAMEWORK_DIR, "node_modules"),
  basename(dirname(dirname(FRAMEWORK_DIR))) === "node_modules"
    ? dirname(dirname(FRAMEWORK_DIR))
    : join(dirname(FRAMEWORK_DIR), "node_modules"),
];

const frameworkPackage = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

/** The name projects import the framework by (`import { defineTool } from "<name>"`). */
export const FRAMEWORK_PACKAGE: string = frameworkPackage.name;

export const FRAMEWORK_VERSION: string = frameworkPackage.version;

/** `.ts` when the framework runs from its sources (this repository), `.js` when it runs compiled (installed). */
const OWN_EXTENSION = extname(fileURLToPath(import.meta.url));
const own = (path: string) => fileURLToPath(new URL(`${path}${OWN_EXTENSION}`, import.meta.url));

/** Entry points the built server gets from the framework itself, whatever the project has installed. */
export const FRAMEWORK_ENTRIES: Record<string, string> = {
  [FRAMEWORK_PACKAGE]: own("../index"),
  [`${FRAMEWORK_PACKAGE}/auth`]: own("../auth/index"),
  "svc:runtime": own("../runtime/main"),
};

/**
 * Packages always taken from the framework's installation, so a project needs no `npm install` and the runtime
 * and the components share one copy (one zod, one MCP SDK).
 */
export const RUNTIME_PACKAGES =
  /^(zod|hono|@hono\/node-server|@modelcontextprotocol\/sdk|@opentelemetry\/api)(\/.*)?$/;

/** The URL Node resolves a runtime package to from the framework itself (the very module the runtime uses). */
export function resolveFromFramework(specifier: string): string {
  return import.meta.resolve(specifier);
}
