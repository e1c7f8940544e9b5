import { parseArgs } from "node:util";
import { DEFAULT_TIMINGS, startOperator } from "../controller/operator.ts";

export const summary = "reconcile resources in a cluster (in-cluster or kubeconfig credentials)";

const usage = `Usage: svc-operator run [options]

Watches McpServer, IdentityProvider and McpGateway resources and applies what they render. Uses the
in-cluster service account, or ~/.kube/config (KUBECONFIG) outside a cluster.

Options:
  --namespace NS          watch only NS (namespace-scoped install); default all namespaces
  --lease-namespace NS    namespace of the leader-election Lease (default $POD_NAMESPACE or "default")
  --lease-name NAME       Lease name (default svc-operator)
  --identity ID           this instance's name in the Lease (default $POD_NAME or host name + random)
  --no-leader-election    run the controller without a Lease (one replica only)
  --lease-duration S      seconds a Lease stays valid without renewal (default 15)
  --renew-deadline S      seconds the leader keeps trying to renew before stepping down (default 10)
  --retry-period S        seconds between lease attempts (default 2)
  --health-host HOST      address of /healthz, /readyz, /metrics (default 0.0.0.0)
  --health-port PORT      their port (default 8081)
  --server URL            API server URL (development; default: in-cluster or kubeconfig)
  -h, --help              show this help

SIGTERM or SIGINT: finish the reconcile in flight, release the Lease, exit 0 (within 25 s, even with the
API server unreachable). Watches that fail are restarted after 1 s, 2 s, 4 s ... up to 30 s (jittered).
`;

const SHUTDOWN_DEADLINE_MS = 25_000;

function seconds(value: string | undefined, fallbackMs: number, name: string): number {
  if (value === undefined) return fallbackMs;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new Error(`--${name} must be a positive number of seconds (was "${value}")`);
  return parsed * 1000;
}

export async function run(argv: string[]): Promise<number> {
  let options: Parameters<typeof startOperator>[0];
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        namespace: { type: "string" },
        "lease-namespace": { type: "string" },
        "lease-name": { type: "string" },
        identity: { type: "string" },
        "no-leader-election": { type: "boolean" },
        "lease-duration": { type: "string" },
        "renew-deadline": { type: "string" },
        "retry-period": { type: "string" },
        "health-host": { type: "string" },
        "health-port": { type: "string" },
        server: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      process.stdout.write(usage);
      return 0;
    }
    const port = Number(values["health-port"] ?? 8081);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--health-port must be a port number (was "${values["health-port"]}")`);
    options = {
      ...(values.namespace ? { namespace: values.namespace } : {}),
      ...(values.server ? { server: values.server } : {}),
      leaseNamespace: values["lease-namespace"] ?? process.env.POD_NAMESPACE ?? "default",
      leaseName: values["lease-name"] ?? "svc-operator",
      ...((values.identity ?? process.env.POD_NAME)
        ? { identity: values.identity ?? process.env.POD_NAME }
        : {}),
      leaderElection: !values["no-leader-election"],
      leaseDurationMs: seconds(values["lease-duration"], DEFAULT_TIMINGS.leaseDurationMs, "lease-duration"),
      renewDeadlineMs: seconds(values["renew-deadline"], DEFAULT_TIMINGS.renewDeadlineMs, "renew-deadline"),
      retryPeriodMs: seconds(values["retry-period"], DEFAULT_TIMINGS.retryPeriodMs, "retry-period"),
      host: values["health-host"] ?? "0.0.0.0",
      port,
    };
  } catch (error) {
    process.stderr.write(`svc-operator run: ${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  const operator = await startOperator(options);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  // Every step of stop() is bounded (lease calls by the renew deadline), but a request to an API server
  // that never answers can still hold the process open: past the deadline, exit anyway, before the
  // kubelet's SIGKILL at terminationGracePeriodSeconds (30 in the chart).
  const deadline = setTimeout(() => {
    process.stderr.write(
      `svc-operator: shutdown did not finish within ${SHUTDOWN_DEADLINE_MS / 1000} s; exiting\n`,
    );
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  await operator.stop();
  clearTimeout(deadline);
  // Sockets of list requests still waiting on an unreachable API server would keep the event loop alive.
  process.exit(0);
}
