import { spawnSync } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { build, type Message } from "esbuild";
import { discoverProject } from "../project/discover.ts";
import { deprecationWarning, legacyHealthFields, loadSettings } from "../project/settings.ts";
import { entrySource } from "./entry-source.ts";
import { FRAMEWORK_NODE_PATHS, FRAMEWORK_VERSION } from "./framework-location.ts";
import type { BuildMode, Manifest } from "./manifest.ts";
import { frameworkResolvePlugin } from "./resolve-plugin.ts";
import { hashSources } from "./sources.ts";

export class BuildError extends Error {
  override name = "BuildError";
}

function formatMessages(projectDir: string, messages: Message[]): string {
  return messages
    .map((m) => {
      // esbuild reports paths relative to absWorkingDir (the project): keep them project-relative.
      const where = m.location
        ? `${relative(projectDir, resolve(projectDir, m.location.file))}:${m.location.line}:${m.location.column}: `
        : "";
      return `${where}${m.text}`;
    })
    .join("\n");
}

/** Loads the bundle in a child process (`--describe`) to check every component without starting a server. */
function describeBundle(
  outfile: string,
  projectDir: string,
): Pick<Manifest, "components"> & { problems: string[] } {
  const child = spawnSync(process.execPath, [outfile, "--describe"], {
    cwd: projectDir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" },
    timeout: 60_000,
  });
  const line = child.stdout.trim().split("\n").pop() ?? "";
  try {
    const { problems, ...components } = JSON.parse(line) as Manifest["components"] & { problems: string[] };
    return { components, problems };
  } catch {
    throw new BuildError(`loading the built components failed:\n${child.stderr || child.stdout}`);
  }
}

/**
 * `svc build`: validates svc.json, discovers components, bundles dist/server.mjs with the framework runtime
 * built in, checks every component, and writes dist/manifest.json. dist/ is removed first, so a failed build
 * never leaves an old server behind. Neither mode copies .env; `dev` only makes `svc run` load it at run time.
 */
export async function buildProject(projectDirInput: string, mode: BuildMode): Promise<Manifest> {
  const projectDir = resolve(projectDirInput);
  const settings = await loadSettings(projectDir);
  const rawSettings = JSON.parse(await readFile(join(projectDir, "svc.json"), "utf8")) as Record<
    string,
    unknown
  >;
  const files = await discoverProject(projectDir);
  const distDir = join(projectDir, "dist");
  await rm(distDir, { recursive: true, force: true });
  const outfile = join(distDir, "server.mjs");
  const sources = await hashSources(projectDir);
  try {
    await build({
      stdin: {
        contents: entrySource(projectDir, files, rawSettings, legacyHealthFields(rawSettings)),
        resolveDir: projectDir,
        sourcefile: "svc-entry.mjs",
        loader: "js",
      },
      absWorkingDir: projectDir,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      outfile,
      sourcemap: "linked",
      logLevel: "silent",
      nodePaths: FRAMEWORK_NODE_PATHS,
      plugins: [frameworkResolvePlugin()],
      // Some bundled CommonJS dependencies call require(); give the ESM bundle one.
      banner: {
        js: "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);",
      },
      define: { "process.env.NODE_ENV": JSON.stringify(mode === "prod" ? "production" : "development") },
    });
  } catch (error) {
    await rm(distDir, { recursive: true, force: true });
    const errors = (error as { errors?: Message[] }).errors;
    throw new BuildError(errors ? formatMessages(projectDir, errors) : (error as Error).message);
  }
  const described = describeBundle(outfile, projectDir);
  if (described.problems.length > 0) {
    await rm(distDir, { recursive: true, force: true });
    throw new BuildError(described.problems.join("\n"));
  }
  const manifest: Manifest = {
    name: settings.name,
    mode,
    framework: FRAMEWORK_VERSION,
    builtAt: new Date().toISOString(),
    entry: "server.mjs",
    components: described.components,
    files: {
      auth: files.auth !== undefined,
      health: files.health !== undefined,
      readiness: files.readiness !== undefined,
    },
    sources,
    warnings: legacyHealthFields(rawSettings).map(deprecationWarning),
  };
  await writeFile(join(distDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
