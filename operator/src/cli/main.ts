// `svc-operator <command>`: a small command table; each command lives in its own file.
import * as render from "./render.ts";
import * as runCommand from "./run.ts";
import { OPERATOR_VERSION } from "./version.ts";

interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, Command> = { run: runCommand, render };

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(
    ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
  );
  return `svc-operator ${OPERATOR_VERSION} — turn McpServer, IdentityProvider and McpGateway resources into gateway config

Usage: svc-operator <command> [options]

Commands:
${lines.join("\n")}

Options:
  -h, --help     show this help (or: svc-operator <command> --help)
  -v, --version  print the version
`;
}

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h" || name === "help") {
  process.stdout.write(usage());
} else if (name === "--version" || name === "-v") {
  process.stdout.write(`${OPERATOR_VERSION}\n`);
} else {
  const command = commands[name];
  if (command) {
    process.exitCode = await command.run(rest);
  } else {
    process.stderr.write(`svc-operator: unknown command "${name}"\n\n${usage()}`);
    process.exitCode = 2;
  }
}
