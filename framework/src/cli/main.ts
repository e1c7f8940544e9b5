import { FRAMEWORK_VERSION } from "../build/framework-location.ts";
import { UsageError } from "./args.ts";
import * as build from "./build.ts";
import * as dev from "./dev.ts";
import * as init from "./init.ts";
import * as runCommand from "./run.ts";

interface Command {
  usage: string;
  summary: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, Command> = { init, build, run: runCommand, dev };

const width = Math.max(...Object.values(commands).map((c) => c.usage.length));
const usage = `svc ${FRAMEWORK_VERSION} — build production MCP tool servers from a project directory

Usage: svc <command> [options]

Commands:
${Object.values(commands)
  .map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`)
  .join("\n")}

Every command but init works on the current directory, or on --project DIR.

Options:
  -h, --help     show this help (or: svc <command> --help)
  -v, --version  print the version
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage);
    return 0;
  }
  if (name === "--version" || name === "-v") {
    process.stdout.write(`${FRAMEWORK_VERSION}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`svc: unknown command '${name}'\n\n${usage}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`svc ${name}: ${error.message}\nRun 'svc ${name} --help' for usage.\n`);
      return 2;
    }
    process.stderr.write(`svc ${name}: ${(error as Error).message}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// -1: a server now runs in this process and ends it itself.
if (code >= 0) process.exitCode = code;
