#!/usr/bin/env node
// Entry point for `svc-operator`. An installed package runs its compiled dist/; a checkout of the repository (src/ is
// not published) runs the TypeScript sources with Node's type stripping, on by default from Node 22.18.
// Older Node gets a clear message instead of a stack trace.
import { existsSync } from "node:fs";

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `svc-operator needs Node.js >= 22.18 (this is ${process.versions.node}). Run it through npm (npx svc-operator) so the project's pinned Node is used.\n`,
  );
  process.exit(2);
}
const source = new URL("../src/cli/main.ts", import.meta.url);
if (existsSync(source)) {
  // The sources import the gateway workspace by package name: resolve it to its sources too (the export
  // condition the repository's tsconfig and test runner use).
  const { registerHooks } = await import("node:module");
  registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: ["svc-source", ...context.conditions] }),
  });
  await import(source.href);
} else {
  await import("../dist/cli/main.js");
}
