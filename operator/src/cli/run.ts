import { parseArgs } from "node:util";
import { DEFAULT_TIMINGS, startOperator } from "../controller/operator.ts";
import { describeArgsError } from "./usage-error.ts";

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
  --control-plane-port P  serve the control-plane API gateways in distributed and centralized mode call, on
                          port P (0 picks a free one); not served without it (the chart sets 8090)
  --control-plane-host H  its address (default 0.0.0.0)
  --server URL            API server URL (development; default: in-cluster or kubeconfig)
  -h, --help              show this help

SIGTERM or SIGINT: finish the reconcile in flight, release the Lease, exit 0 (within 25 s, even with the
API server unreachable). Watches that fail are restarted after 1 s, 2 s, 4 s ... up to 30 s (jittered).
`;

const SHUTDOWN_DEADLINE_MS = 25_000;

/** Milliseconds from a flag in seconds; a bad value is added to `problems` (all are reported at once). */
function seconds(value: string | undefined, fallbackMs: number, name: string, problems: string[]): number {
  if (value === undefined) return fallbackMs;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) {
    problems.push(`--${name} must be a positive number of seconds (was "${value}")`);
    return fallbackMs;
  }
  return parsed * 1000;
}

const RUN_OPTIONS = {
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
  "control-plane-host": { type: "string" },
  "control-plane-port": { type: "string" },
  server: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

export async function run(argv: string[]): Promise<number> {
  let options: Parameters<typeof startOperator>[0];
  try {
    const { values } = parseArgs({
      args: argv,
      options: RUN_OPTIONS,
    });
    if (values.help) {
      process.stdout.write(usage);
      return 0;
    }
    const problems: string[] = [];
    const port = Number(values["health-port"] ?? 8081);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      problems.push(`--health-port must be a port number (was "${values["health-port"]}")`);
    const controlPlanePort = Number(values["control-plane-port"] ?? 0);
    if (!Number.isInteger(controlPlanePort) || controlPlanePort < 0 || controlPlanePort > 65535)
      problems.push(`--control-plane-port must be a port number (was "${values["control-plane-port"]}")`);
    const timing = (flag: "lease-duration" | "renew-deadline" | "retry-period", fallbackMs: number) =>
      seconds(values[flag], fallbackMs, flag, problems);
    options = {
      ...(values.namespace ? { namespace: values.namespace } : {}),
      ...(values.server ? { server: values.server } : {}),
      leaseNamespace: values["lease-namespace"] ?? process.env.POD_NAMESPACE ?? "default",
      leaseName: values["lease-name"] ?? "svc-operator",
      ...((values.identity ?? process.env.POD_NAME)
        ? { identity: values.identity ?? process.env.POD_NAME }
        : {}),
      leaderElection: !values["no-leader-election"],
      leaseDurationMs: timing("lease-duration", DEFAULT_TIMINGS.leaseDurationMs),
      renewDeadlineMs: timing("renew-deadline", DEFAULT_TIMINGS.renewDeadlineMs),
      retryPeriodMs: timing("retry-period", DEFAULT_TIMINGS.retryPeriodMs),
      host: values["health-host"] ?? "0.0.0.0",
      port,
      ...(values["control-plane-port"] === undefined
        ? {}
        : { controlPlane: { host: values["control-plane-host"] ?? "0.0.0.0", port: controlPlanePort } }),
    };
    if (problems.length === 1) throw new Error(problems[0]);
    if (problems.length > 1) throw new Error(`${problems.length} problems:\n  ${problems.join("\n  ")}`);
  } catch (error) {
    const message = describeArgsError(error as Error, Object.keys(RUN_OPTIONS));
    process.stderr.write(`svc-operator run: ${message}\n\n${usage}`);
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
