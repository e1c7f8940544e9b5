// Placeholder until the framework issue lands: `svc --help` answers, everything else says it is not there yet.
const usage = `svc — build production MCP tool servers from a project directory

Usage: svc <command> [options]

Commands (coming with the framework release):
  init DIR        scaffold a project
  build [dev|prod] build dist/
  run             serve the built project
  dev             watch and restart

Options:
  -h, --help      show this help
`;

const [command] = process.argv.slice(2);
if (command === undefined || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(usage);
} else {
  process.stderr.write(`svc: '${command}' is not available yet in this version\n\n${usage}`);
  process.exitCode = 2;
}
