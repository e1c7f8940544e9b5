#!/usr/bin/env node
// Entry point for `svc-gateway`. The sources are TypeScript run directly by Node's type stripping,
// which is on by default from Node 22.18; older Node gets a clear message instead of a stack trace.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `svc-gateway needs Node.js >= 22.18 (this is ${process.versions.node}). Run it through npm (npx svc-gateway) so the project's pinned Node is used.\n`,
  );
  process.exit(2);
}
await import("../src/cli/main.ts");
