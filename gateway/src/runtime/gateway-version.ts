import { createRequire } from "node:module";

/** The package version, read from package.json so it is written in one place. */
export const GATEWAY_VERSION: string = (
  createRequire(import.meta.url)("../../package.json") as { version: string }
).version;
