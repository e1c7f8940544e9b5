// Placeholder until the operator issue lands: `svc --help` answers, everything else says it is not there yet.
const usage = `svc-operator — turn McpServer, IdentityProvider and McpGateway resources into gateway config

Usage: svc-operator <command> [options]

Commands (coming with the operator release):
  run             reconcile custom resources in a cluster
  render -f DIR   print the objects it would apply

Options:
  -h, --help      show this help
`;

const [command] = process.argv.slice(2);
if (command === undefined || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(usage);
} else {
  process.stderr.write(`svc-operator: '${command}' is not available yet in this version\n\n${usage}`);
  process.exitCode = 2;
}
