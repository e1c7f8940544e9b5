import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { FRAMEWORK_VERSION } from "./framework-location.ts";
import { hashSources, sourceChanges } from "./sources.ts";

export type BuildMode = "dev" | "prod";

interface ComponentSummary {
  name: string;
  file: string;
  description: string;
}

/** dist/manifest.json: what was built, from which sources, by which framework version. */
export interface Manifest {
  name: string;
  mode: BuildMode;
  framework: string;
  builtAt: string;
  entry: "server.mjs";
  components: {
    tools: ComponentSummary[];
    resources: (ComponentSummary & { uri: string })[];
    prompts: ComponentSummary[];
  };
  files: { auth: boolean; health: boolean; readiness: boolean };
  /** Shown by the CLI after a build (e.g. deprecated svc.json fields); the server logs them again at start. */
  warnings: string[];
  sources: Record<string, string>;
}

export async function readManifest(projectDir: string): Promise<Manifest | undefined> {
  try {
    return JSON.parse(await readFile(join(projectDir, "dist", "manifest.json"), "utf8")) as Manifest;
  } catch {
    return undefined;
  }
}

/** Why dist/ cannot be used as it is, or undefined when it matches the sources. */
export async function staleReason(
  projectDir: string,
  manifest: Manifest | undefined,
): Promise<string | undefined> {
  if (!manifest) return "dist/ has not been built";
  if (manifest.framework !== FRAMEWORK_VERSION) {
    return `dist/ was built by svc ${manifest.framework}, this is ${FRAMEWORK_VERSION}`;
  }
  const changes = sourceChanges(manifest.sources, await hashSources(projectDir));
  return changes ? `sources changed since the last build (${changes})` : undefined;
}
