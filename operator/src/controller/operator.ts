import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { type ControlPlaneApi, serveControlPlaneApi } from "../control-plane/api-server.ts";
import { GatewayDirectory } from "../control-plane/gateway-directory.ts";
import { KubeClient, type KubeClientOptions, loadKubeConfig } from "../kube/kube-client.ts";
import { Controller } from "./controller.ts";
import { type Endpoints, serveEndpoints } from "./http-endpoints.ts";
import { LeaderElector } from "./leader-election.ts";
import { jsonLogger, type Logger } from "./log.ts";
import { Metrics } from "./metrics.ts";

// One operator process: health/metrics endpoints, leader election, and — only while leading — the
// controller. Losing the lease stops the controller at once (another instance has taken over); shutdown
// finishes the reconcile in flight, stops the watches and releases the lease.

export interface OperatorOptions extends KubeClientOptions {
  namespace?: string;
  leaseNamespace: string;
  leaseName: string;
  identity?: string;
  leaderElection: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  host: string;
  port: number;
  /** Where the control-plane API listens (distributed and centralized gateways); absent: not served. */
  controlPlane?: { host: string; port: number };
  backoff?: { baseDelayMs: number; maxDelayMs: number };
  log?: Logger;
}

export interface RunningOperator {
  identity: string;
  endpoints: Endpoints;
  controlPlane: ControlPlaneApi | undefined;
  isLeader(): boolean;
  controller(): Controller | undefined;
  stop(): Promise<void>;
}

export const DEFAULT_TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const identity = options.identity ?? `${hostname()}-${randomBytes(3).toString("hex")}`;
  const log = options.log ?? jsonLogger({ component: "svc-operator", identity });
  const kube = new KubeClient(loadKubeConfig(options));
  const metrics = new Metrics();
  let controller: Controller | undefined;
  /** The control-plane API's caches (with options.controlPlane). */
  let directory: GatewayDirectory | undefined;
  let transition: Promise<void> = Promise.resolve();
  let leading = false;

  const startController = () => {
    transition = transition.then(async () => {
      if (!leading || controller) return;
      const next = new Controller({
        kube,
        log,
        metrics,
        ...(options.namespace ? { namespace: options.namespace } : {}),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
      controller = next;
      // Not awaited: with the API server unreachable, start() waits for the first lists for as long as it
      // takes, and a stop (SIGTERM, lost lease) must not queue behind it; stop() ends that wait instead.
      next.start().catch((error: unknown) => {
        log.error("controller failed to start", { error: String(error) });
      });
    });
  };
  const stopController = () => {
    transition = transition.then(async () => {
      const current = controller;
      controller = undefined;
      await current?.stop();
    });
  };

  const elector = new LeaderElector(
    kube,
    {
      namespace: options.leaseNamespace,
      name: options.leaseName,
      identity,
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      onStartedLeading: () => {
        leading = true;
        startController();
        directory?.writePolicyStatuses();
      },
      onStoppedLeading: () => {
        leading = false;
        stopController();
      },
    },
    log,
  );
  metrics.gauge("svc_operator_leader", "1 while this instance holds the lease", () => (leading ? 1 : 0));

  const endpoints = await serveEndpoints({
    host: options.host,
    port: options.port,
    metrics,
    ready: () => {
      if (!leading) return { ready: true, detail: "standing by (not the leader)" };
      return controller?.synced
        ? { ready: true, detail: "leading; caches synced" }
        : { ready: false, detail: "leading; caches syncing" };
    },
  });

  // The control-plane API reads its own caches, so every replica serves it, leading or not.
  const controlPlaneLifetime = new AbortController();
  let controlPlane: ControlPlaneApi | undefined;
  if (options.controlPlane !== undefined) {
    directory = new GatewayDirectory(kube, log, () => leading, options.namespace);
    controlPlane = await serveControlPlaneApi({ ...options.controlPlane, kube, directory, metrics, log });
    directory.start(controlPlaneLifetime.signal).catch((error: unknown) => {
      log.error("control-plane caches failed to start", { error: String(error) });
    });
    log.info("control-plane API listening", { url: controlPlane.url });
  }

  if (options.leaderElection) elector.start();
  else {
    leading = true;
    startController();
  }
  log.info("operator started", {
    endpoints: endpoints.url,
    namespace: options.namespace ?? "(all)",
    leaderElection: options.leaderElection,
  });

  return {
    identity,
    endpoints,
    controlPlane,
    isLeader: () => leading && controller?.synced === true,
    controller: () => controller,
    async stop() {
      if (options.leaderElection) await elector.stop();
      leading = false;
      stopController();
      await transition;
      controlPlaneLifetime.abort();
      await controlPlane?.close();
      await directory?.stop();
      await endpoints.close();
      log.info("operator stopped");
    },
  };
}
