import { GATEWAY_VERSION } from "../runtime/gateway-version.ts";

// `svc-gateway <command>`: a table of commands, each in its own file, loaded only when used so that
// `validate` does not pay for the proxy's start-up.

interface CommandModule {
  run(argv: string[]): Promise<number>;
}

interface Command {
  summary: string;
  load(): Promise<CommandModule>;
}

const COMMANDS: Record<string, Command> = {
  start: {
    summary: "run the gateway: proxy /{server}/mcp to the configured upstreams",
    load: () => import("./start.ts"),
  },
  validate: {
    summary: "check a configuration file and print a summary",
    load: () => import("./validate.ts"),
  },
  inspect: {
    summary: "dry-run the message inspectors (PII scrubbing) on JSON lines of sample text",
    load: () => import("./inspect.ts"),
  },
  audit: {
    summary: "audit verify FILE: check an audit log's hash chain for edits and deletions",
    load: () => import("./audit.ts"),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const lines = Object.entries(COMMANDS).map(
    ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
  );
  return `svc-gateway ${GATEWAY_VERSION} — the MCP gateway

Usage: svc-gateway <command> [options]

Commands:
${lines.join("\n")}

Options:
  -h, --help     show this help (or: svc-gateway <command> --help)
  -v, --version  print the version

Documentation: gateway/README.md
`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    process.stdout.write(usage());
    return 0;
  }
  if (name === "-v" || name === "--version") {
    process.stdout.write(`${GATEWAY_VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    process.stderr.write(`svc-gateway: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  return (await command.load()).run(rest);
}

process.exitCode = await main(process.argv.slice(2));
