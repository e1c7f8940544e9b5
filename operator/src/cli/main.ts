// `svc-operator <command>`: a small command table; each command lives in its own file.
import * as render from "./render.ts";
import * as runCommand from "./run.ts";

interface Command {
  summary: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, Command> = { run: runCommand, render };

const usage = `svc-operator — turn McpServer, IdentityProvider and McpGateway resources into gateway config

Usage: svc-operator <command> [options]

Commands:
${Object.values(commands)
  .map((command) => `  ${command.summary}`)
  .join("\n")}

Options:
  -h, --help      show this help (also after a command)
`;

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h" || name === "help") {
  process.stdout.write(usage);
} else {
  const command = commands[name];
  if (command) {
    process.exitCode = await command.run(rest);
  } else {
    process.stderr.write(`svc-operator: unknown command '${name}'\n\n${usage}`);
    process.exitCode = 2;
  }
}
