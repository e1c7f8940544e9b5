import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The framework package's own directory: the build resolves the runtime packages from here. */
export const FRAMEWORK_DIR = fileURLToPath(new URL("../..", import.meta.url));

const frameworkPackage = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  name: string;
  version: string;
};

/** The name projects import the framework by (`import { defineTool } from "<name>"`). */
export const FRAMEWORK_PACKAGE: string = frameworkPackage.name;

export const FRAMEWORK_VERSION: string = frameworkPackage.version;

/** Entry points the built server gets from the framework itself, whatever the project has installed. */
export const FRAMEWORK_ENTRIES: Record<string, string> = {
  [FRAMEWORK_PACKAGE]: fileURLToPath(new URL("../index.ts", import.meta.url)),
  [`${FRAMEWORK_PACKAGE}/auth`]: fileURLToPath(new URL("../auth/index.ts", import.meta.url)),
  "svc:runtime": fileURLToPath(new URL("../runtime/main.ts", import.meta.url)),
};

/**
 * Packages always taken from the framework's installation, so a project needs no `npm install` and the runtime
 * and the components share one copy (one zod, one MCP SDK).
 */
export const RUNTIME_PACKAGES =
  /^(zod|hono|@hono\/node-server|@modelcontextprotocol\/sdk|@opentelemetry\/api)(\/.*)?$/;
