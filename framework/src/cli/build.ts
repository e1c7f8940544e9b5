import { BuildError, buildProject } from "../build/build-project.ts";
import type { BuildMode, Manifest } from "../build/manifest.ts";
import { SettingsError } from "../project/settings.ts";
import { parseCommandArgs, UsageError } from "./args.ts";

export const usage = "build [dev|prod]";
export const summary = "bundle the project into dist/ (server.mjs + manifest.json)";

const help = `Usage: svc build [dev|prod] [--project DIR]

Bundles the project into dist/: server.mjs (the MCP server with the svc runtime built in) and manifest.json
(the components and the sources they came from). The build fails, naming the files, on a duplicate name, a
missing description, or a module that exports nothing usable.

  dev    (default) svc run loads .env at run time
  prod   .env is never read; set secrets in the environment of the running server

Neither mode copies .env or any secret into dist/.

Options:
  --project DIR   the project directory (default: current directory)
  -h, --help      show this help
`;

export function parseMode(value: string | undefined): BuildMode {
  if (value === undefined || value === "dev" || value === "prod") return value ?? "dev";
  throw new UsageError(`unknown build mode '${value}' (expected dev or prod)`);
}

/**
 * Runs a build and prints problems the way every command does; returns whether it succeeded. `build` is a
 * kept builder's (svc dev) or a one-off one.
 */
export async function buildAndReport(
  projectDir: string,
  mode: BuildMode,
  build: () => Promise<Manifest> = () => buildProject(projectDir, mode),
): Promise<boolean> {
  try {
    const manifest = await build();
    const { tools, resources, prompts } = manifest.components;
    process.stderr.write(
      `svc: built ${manifest.name} (${mode}): ${tools.length} tools, ${resources.length} resources, ${prompts.length} prompts → dist/server.mjs\n`,
    );
    for (const warning of manifest.warnings) process.stderr.write(`svc: warning: ${warning}\n`);
    return true;
  } catch (error) {
    if (error instanceof BuildError || error instanceof SettingsError) {
      process.stderr.write(`svc: build failed:\n${error.message.replace(/^/gm, "  ")}\n`);
      return false;
    }
    throw error;
  }
}

export async function run(argv: string[]): Promise<number> {
  const { positionals, projectDir, help: wantsHelp } = parseCommandArgs(argv, {});
  if (wantsHelp) {
    process.stdout.write(help);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`);
  return (await buildAndReport(projectDir, parseMode(positionals[0]))) ? 0 : 1;
}
