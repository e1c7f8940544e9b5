import { execFile } from "node:child_process";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { type BuildOptions, context, type Message, type Plugin } from "esbuild";
import { discoverProject } from "../project/discover.ts";
import { deprecationWarning, legacyHealthFields, loadSettings } from "../project/settings.ts";
import { entrySource } from "./entry-source.ts";
import { FRAMEWORK_NODE_PATHS, FRAMEWORK_VERSION } from "./framework-location.ts";
import type { BuildMode, Manifest } from "./manifest.ts";
import { frameworkResolvePlugin } from "./resolve-plugin.ts";
import { hashSources } from "./sources.ts";

const execFileAsync = promisify(execFile);

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

/**
 * Loads the bundle in a child process (`--describe`) to check every component without starting a server.
 * Asynchronous, so `svc dev` keeps forwarding requests to the running server meanwhile.
 */
async function describeBundle(
  outfile: string,
  projectDir: string,
): Promise<Pick<Manifest, "components"> & { problems: string[] }> {
  const { stdout, stderr } = await execFileAsync(process.execPath, [outfile, "--describe"], {
    cwd: projectDir,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" },
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? "",
    stderr: error.stderr ?? String(error),
  }));
  const line = stdout.trim().split("\n").pop() ?? "";
  try {
    const { problems, ...components } = JSON.parse(line) as Manifest["components"] & { problems: string[] };
    return { components, problems };
  } catch {
    throw new BuildError(`loading the built components failed:\n${stderr || stdout}`);
  }
}

/** The generated entry, a virtual module whose contents are set before every (re)build. */
const ENTRY = "svc:entry";

function entryPlugin(projectDir: string, contents: () => string): Plugin {
  return {
    name: "svc-entry",
    setup(build) {
      build.onResolve({ filter: /^svc:entry$/ }, () => ({ path: ENTRY, namespace: "svc-entry" }));
      build.onLoad({ filter: /.*/, namespace: "svc-entry" }, () => ({
        contents: contents(),
        resolveDir: projectDir,
        loader: "js",
      }));
    },
  };
}

/**
 * The esbuild options per mode. prod bundles everything (dependencies included, minified) into one file an
 * image can run with no node_modules. dev bundles only the project's own files and leaves every package to
 * Node at run time (the framework and its runtime packages by their installed location), so a rebuild after an
 * edit compiles a few small files instead of the dependency graph.
 */
function bundleOptions(projectDir: string, mode: BuildMode, entry: () => string): BuildOptions {
  return {
    entryPoints: [ENTRY],
    absWorkingDir: projectDir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    outfile: join(projectDir, "dist", "server.mjs"),
    // A separate file: the bundle stays small, and an image may leave the map out.
    sourcemap: "linked",
    minify: mode === "prod",
    // Error classes and components keep the names they are reported by.
    keepNames: mode === "prod",
    logLevel: "silent",
    nodePaths: FRAMEWORK_NODE_PATHS,
    plugins: [entryPlugin(projectDir, entry), frameworkResolvePlugin({ externalPackages: mode === "dev" })],
    // Some bundled CommonJS dependencies call require(); give the ESM bundle one.
    banner: {
      js: "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);",
    },
    define: { "process.env.NODE_ENV": JSON.stringify(mode === "prod" ? "production" : "development") },
  };
}

export interface ProjectBuilder {
  /**
   * Builds dist/ from the project as it is now; throws BuildError or SettingsError naming every problem.
   * `onBundled` runs once dist/server.mjs is written, before its components are checked: `svc dev` starts the
   * new server then, so the check and the start overlap.
   */
  build(onBundled?: () => void): Promise<Manifest>;
  dispose(): Promise<void>;
}

/**
 * `svc build` and `svc dev`: validates svc.json, discovers components, bundles dist/server.mjs with the
 * framework runtime, checks every component, and writes dist/manifest.json. dist/ is removed first, so a failed
 * build never leaves an old server behind. Neither mode copies .env; `dev` only makes `svc run` load it at run
 * time. The esbuild context is kept between builds, so a rebuild only recompiles what changed.
 */
export async function createProjectBuilder(
  projectDirInput: string,
  mode: BuildMode,
): Promise<ProjectBuilder> {
  const projectDir = resolve(projectDirInput);
  let entry = "";
  const esbuild = await context(bundleOptions(projectDir, mode, () => entry));
  return {
    dispose: () => esbuild.dispose(),
    async build(onBundled) {
      const settings = await loadSettings(projectDir);
      const rawSettings = JSON.parse(await readFile(join(projectDir, "svc.json"), "utf8")) as Record<
        string,
        unknown
      >;
      const files = await discoverProject(projectDir);
      const distDir = join(projectDir, "dist");
      await rm(distDir, { recursive: true, force: true });
      const sources = await hashSources(projectDir);
      entry = entrySource(projectDir, files, rawSettings, legacyHealthFields(rawSettings));
      try {
        await esbuild.rebuild();
      } catch (error) {
        await rm(distDir, { recursive: true, force: true });
        const errors = (error as { errors?: Message[] }).errors;
        throw new BuildError(errors ? formatMessages(projectDir, errors) : (error as Error).message);
      }
      onBundled?.();
      const described = await describeBundle(join(distDir, "server.mjs"), projectDir);
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
    },
  };
}

/** One build (`svc build`, `svc run` on a stale dist/). */
export async function buildProject(projectDir: string, mode: BuildMode): Promise<Manifest> {
  const builder = await createProjectBuilder(projectDir, mode);
  try {
    return await builder.build();
  } finally {
    await builder.dispose();
  }
}
