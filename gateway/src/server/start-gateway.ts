// Starts the gateway: settings, KV store, config, HTTP server; and owns its lifecycle (reload, drain,
// close). Tests and the quick start start it in process through this function, as the CLI does.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { getRequestListener } from "@hono/node-server";
import { AuditLog } from "../audit/audit-log.ts";
import { auditTargetFrom } from "../audit/audit-target.ts";
import { enabledExporters } from "../audit/exporters/enabled.ts";
import { ExporterSinks } from "../audit/exporters/index.ts";
import { type LoadedConfig, loadConfig } from "../config/index.ts";
import type { PolicyDocument } from "../config/organization-policy.ts";
import { configurationFromText } from "../control-plane/centralized-config.ts";
import type { ControlPlaneSource } from "../control-plane/control-plane-source.ts";
import { hasGroupSyncCredentials } from "../identity/group-sync/group-source.ts";
import { GroupSync } from "../identity/group-sync/group-sync.ts";
import { createKvStore, type KvStore } from "../kv/index.ts";
import { RateLimiter } from "../limits/rate-limiter.ts";
import { ReplayGuard } from "../limits/replay-guard.ts";
import { UserLoad } from "../limits/user-load.ts";
import { createLogger, type Logger, parseLogLevel } from "../log/logger.ts";
import { writeStdoutBatched } from "../log/stdout-batch.ts";
import type { OAuthServer } from "../oauth/oauth-server.ts";
import { OpenStreams } from "../proxy/open-streams.ts";
import { isLoopbackAddress } from "../proxy/origin-guard.ts";
import { UpstreamInstances } from "../proxy/upstream-instances.ts";
import { UpstreamPools } from "../proxy/upstream-pools.ts";
import { ToolHintsCache } from "../rbac/tool-hints-cache.ts";
import type { ConfigSnapshot } from "../runtime/config-snapshot.ts";
import { GATEWAY_VERSION } from "../runtime/gateway-version.ts";
import { MemoryTrimmer } from "../runtime/memory-trim.ts";
import { GatewayMetrics } from "../runtime/metrics.ts";
import { SessionPins } from "../sessions/session-pins.ts";
import { SessionRegistry } from "../sessions/session-registry.ts";
import {
  loadTelemetryModules,
  startTelemetry,
  type Telemetry,
  telemetryModulesLoaded,
} from "../telemetry/start-telemetry.ts";
import { createGatewayApp, type GatewayAppDeps } from "./app.ts";
import { ConfigReloader } from "./config-reloader.ts";
import type { ConfigSource } from "./config-source.ts";
import { fileConfigSource } from "./config-watcher.ts";
import { ConnectionDrain, IDLE_CONNECTION_GRACE_MS } from "./connection-drain.ts";
import { ExportScheduling } from "./export-scheduling.ts";
import { type HealthInputs, healthAnswer, healthLevel, readinessAnswer } from "./health.ts";
import { plainMcpServer, serveMcpRequest } from "./mcp-route.ts";
import { buildOAuthServer } from "./oauth-server-setup.ts";
import { SessionAffinityWarnings } from "./session-affinity.ts";
import { type GatewaySettings, readSettings, SettingsError } from "./settings.ts";
import { buildUpstreamOAuth } from "./upstream-oauth-setup.ts";

export interface StartGatewayOptions {
  configPath?: string;
  env?: Record<string, string | undefined>;
  /**
   * Default 127.0.0.1: a gateway reachable from the network is a decision (the container image and the chart pass
   * 0.0.0.0), not an accident of the defaults.
   */
  host?: string;
  /** Default $PORT or 8080; 0 picks a free port. */
  port?: number;
  /**
   * Group sync: how long synced groups are trusted (where the management APIs are is configuration:
   * identity_providers[].management_url and management_token_url). Not configuration: the CLI never sets these.
   */
  groupSync?: { ttlMs?: number; maxStaleMs?: number };
}

export interface RunningGateway {
  /** Where clients reach it, e.g. http://127.0.0.1:43123 */
  url: string;
  /** Reloads the config file now; true when a new config is serving. */
  reload(): Promise<boolean>;
  /** Readiness 503 at once, serve on for the drain delay, then stop and wait for in-flight work (bounded). */
  drain(): Promise<void>;
  /** Stops at once, cutting whatever is in flight. */
  close(): Promise<void>;
}

function displayUrl(host: string, port: number): string {
  if (host === "0.0.0.0" || host === "") return `http://127.0.0.1:${port}`;
  if (host === "::") return `http://[::1]:${port}`;
  return host.includes(":") ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

function listenPort(options: StartGatewayOptions, env: Record<string, string | undefined>): number {
  if (options.port !== undefined) return options.port;
  const text = env.PORT?.trim();
  if (text === undefined || text === "") return 8080;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be 0-65535, got '${text}'`);
  return port;
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * Anonymous access is for a workstation: on an address other hosts can reach, it would let anyone on the network in
 * whenever no identity provider is configured (a reload can remove them). So it takes a second, explicit setting.
 */
export function refuseRemoteAnonymousAccess(
  settings: Pick<GatewaySettings, "allowAnonymous" | "allowAnonymousRemote">,
  host: string,
): void {
  if (!settings.allowAnonymous || isLoopbackAddress(host) || settings.allowAnonymousRemote) return;
  throw new SettingsError(
    `SVC_ALLOW_ANONYMOUS=true with --host ${host}: anyone who can reach this address would get in without a token whenever no identity provider is configured. Bind to 127.0.0.1, or set SVC_ALLOW_ANONYMOUS_REMOTE=true as well if that is really meant`,
  );
}

/** Says loudly, at start and on every reload, when the gateway refuses everyone or lets everyone in. */
function warnAboutAuthMode(logger: Logger, snapshot: ConfigSnapshot, allowAnonymous: boolean): void {
  const { kind } = snapshot.auth;
  if (kind === "closed") {
    logger.warn(
      "no identity_providers configured: every /{server}/mcp request is refused with 401. Configure identity providers, or set SVC_ALLOW_ANONYMOUS=true for local development only",
    );
  } else if (kind === "anonymous") {
    logger.warn(
      "!!! ANONYMOUS ACCESS ENABLED (SVC_ALLOW_ANONYMOUS=true): no identity providers are configured and every request runs as user 'anonymous' WITHOUT AUTHENTICATION. For local development only; never expose this gateway !!!",
    );
  } else if (allowAnonymous) {
    logger.warn(
      "SVC_ALLOW_ANONYMOUS=true is ignored: identity providers are configured, so every request needs a valid token",
    );
  }
}

/**
 * A management credential written but empty (`${VAR:}` with VAR unset) turns group sync off for that provider: one
 * file serves both setups, and the operator hears about it once per load instead of wondering why groups are missing.
 */
function warnAboutGroupSyncOff(logger: Logger, snapshot: ConfigSnapshot): void {
  for (const provider of snapshot.loaded.config.identity_providers) {
    const empty = (["client_id", "client_secret", "management_key"] as const).filter(
      (f) => provider[f] === "",
    );
    if (empty.length > 0 && !hasGroupSyncCredentials(provider)) {
      logger.warn(
        "group sync is off for this identity provider: its management credentials are empty, so only the token's groups count",
        {
          provider: provider.name,
          empty_fields: empty,
        },
      );
    }
  }
}

/** Which servers the prompt-injection firewall inspects, in which mode: said at start, as it is off by default. */
function firewallSummary(snapshot: ConfigSnapshot): string {
  const modes = new Map<string, string[]>();
  for (const route of snapshot.routes.values()) {
    const mode = route.firewall?.settings.mode ?? "off";
    modes.set(mode, [...(modes.get(mode) ?? []), route.name]);
  }
  return [...modes].map(([mode, names]) => `${mode}: ${names.join(", ")}`).join("; ") || "no servers";
}

export async function startGateway(options: StartGatewayOptions = {}): Promise<RunningGateway> {
  const env = options.env ?? process.env;
  const logger = createLogger({ level: parseLogLevel(env.LOG_LEVEL), write: writeStdoutBatched });
  const settings = readSettings(env);
  const host = options.host ?? "127.0.0.1";
  refuseRemoteAnonymousAccess(settings, host);
  const auditTarget = auditTargetFrom(env);
  const auditExports = new ExportScheduling(settings, logger);
  const audit = new AuditLog({
    gateway: env.SVC_GATEWAY_NAME?.trim() || hostname(),
    sinks: [auditTarget.sink],
    spool: { dir: settings.auditSpoolDir, maxBytes: settings.auditSpoolMaxBytes },
    exportGate: auditExports.gate,
    failingLimitMs: settings.auditFailingAfterMs,
    onSinkError: (error, sink) =>
      logger.error("audit sink delivery failed; its queue retries", { sink, error }),
    onDropped: (sink, count) =>
      logger.error(
        "!!! AUDIT EVENTS DROPPED: the sink's spool is at SVC_AUDIT_SPOOL_MAX_BYTES; new events for it are lost until it catches up !!!",
        { sink, count, spool_dir: settings.auditSpoolDir },
      ),
  });
  auditExports.watch(() => audit.sinkStatus());
  // Exporters come from the configuration: added once it has loaded, and rebuilt on every reload.
  const exporterSinks = new ExporterSinks((spec) => auditExports.process.sink(spec));
  const applyExporters = (snapshot: ConfigSnapshot): void =>
    audit.setSinks([auditTarget.sink, ...exporterSinks.sinksFor(snapshot.loaded.config.exporters)]);
  const port = listenPort(options, env);

  const metrics = new GatewayMetrics();
  metrics.watchAuditSinks(() => audit.sinkStatus());
  metrics.watchExportDeferral(() => !auditExports.gate.open);
  const pools = new UpstreamPools({
    connections: settings.upstreamConnections,
    streamConnections: settings.upstreamStreamConnections,
    keepAliveTimeoutMs: 60_000,
  });
  const streams = new OpenStreams(metrics);
  const kv: KvStore = await createKvStore(env, {
    onBreakerChange: (state, lastError) =>
      logger.warn("kv store circuit breaker changed", { state, error: lastError }),
  });
  let kvReady = false;
  kv.ready().then(
    () => {
      kvReady = true;
    },
    (error: unknown) => logger.error("kv store failed to initialise", { error }),
  );
  // Set once the configuration has loaded; until then /readiness answers 503 and MCP requests 503.
  let reloader: ConfigReloader | undefined;
  let oauthServer: OAuthServer | undefined;
  const currentConfig = (): ConfigSnapshot | undefined => reloader?.current();
  // OTLP metrics and traces (exporters.otel); restarted when a reload changes that section.
  let telemetry: Telemetry | undefined;
  let telemetryConfig = "";
  const applyTelemetry = (snapshot: ConfigSnapshot): void => {
    const otel = snapshot.loaded.config.exporters.otel;
    const key = JSON.stringify(otel);
    if (key === telemetryConfig) return;
    if (!telemetryModulesLoaded(otel)) {
      // A reload turned metrics or traces on for the first time: import the SDK, then apply if still current.
      loadTelemetryModules(otel).then(
        () => {
          if (currentConfig() === snapshot) applyTelemetry(snapshot);
        },
        (error: unknown) => logger.error("telemetry could not be started", { error }),
      );
      return;
    }
    telemetryConfig = key;
    const previous = telemetry;
    telemetry = startTelemetry(otel, metrics);
    void previous?.shutdown();
  };

  const groupSync = new GroupSync({
    kv,
    logger,
    ...options.groupSync,
    onFallback: (provider, source) => metrics.recordGroupSyncFallback(provider, source),
  });

  // Distributed and centralized mode: the control plane, once the configuration has named it.
  let controlPlane: ControlPlaneSource | undefined;
  const healthInputs = (): HealthInputs => ({
    kv: kv.status(),
    httpClientOk: !pools.closed,
    upstreams: currentConfig()?.routes.size ?? 0,
    gatewayId: currentConfig()?.loaded.config.control_plane?.gateway_id,
    anonymousAccess: currentConfig()?.auth.kind === "anonymous",
    auditSinks: audit.sinkStatus(),
    groupSync: groupSync.status(),
    ...(controlPlane === undefined ? {} : { controlPlane: controlPlane.status() }),
  });

  const upstreamOAuth = buildUpstreamOAuth({
    env,
    kv,
    audit,
    logger,
    publicUrl: settings.publicUrl,
    currentConfig,
  });

  let draining = false;
  const appDeps: GatewayAppDeps = {
    upstreamOAuth,
    groupSync,
    affinity: {
      instances: new UpstreamInstances(),
      pins: new SessionPins(kv, settings.sessionIdleTimeoutMs),
      turns: new Map(),
    },
    currentConfig,
    rateLimiter: new RateLimiter(kv),
    replayGuard: new ReplayGuard(kv, { sessionTtlMs: settings.sessionIdleTimeoutMs }),
    sessions: new SessionRegistry(kv, {
      idleTtlMs: settings.sessionIdleTimeoutMs,
      maxPerOwner: settings.maxSessionsPerUser,
    }),
    userLoad: new UserLoad({
      maxInFlight: settings.maxInFlightPerUser,
      maxStreams: settings.maxStreamsPerUser,
    }),
    maxBatchMessages: settings.maxBatchMessages,
    toolHints: new ToolHintsCache(),
    audit,
    pools,
    metrics,
    streams,
    logger,
    originPolicy: { allowed: settings.allowedOrigins, loopbackBound: isLoopbackAddress(host) },
    maxBodyBytes: settings.maxBodyBytes,
    upstreamTimeoutMs: settings.upstreamTimeoutMs,
    maxUpstreamResponseBytes: settings.maxUpstreamResponseBytes,
    maxSseEventBytes: settings.maxSseEventBytes,
    publicUrl: settings.publicUrl,
    oauthServer: () => oauthServer,
    forwardRequestHeaders: settings.forwardRequestHeaders,
    requestTracer: () => telemetry?.tracer,
    health: () => healthAnswer(healthInputs()),
    readiness: () =>
      readinessAnswer({
        configLoaded: reloader !== undefined,
        httpClientReady: !pools.closed,
        kvReady,
        draining,
        upstreams: currentConfig()?.routes.size ?? 0,
      }),
  };
  const app = createGatewayApp(appDeps);

  const listener = getRequestListener(app.fetch);
  const memory = new MemoryTrimmer();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    memory.requestSeen();
    connections.track(req, res);
    // From the start of a drain every response asks the client to reconnect, so keep-alive connections move to
    // another replica while this one still serves.
    if (draining) res.setHeader("connection", "close");
    const mcpServer = plainMcpServer(req);
    if (mcpServer !== undefined) serveMcpRequest(req, res, mcpServer, appDeps);
    else void listener(req, res);
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts (60 s)
  // In-flight requests (streams included) and open connections, counted at the socket level for the drain.
  const connections = new ConnectionDrain(server);

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const url = displayUrl(host, (server.address() as AddressInfo).port);

  // Listening before the config is loaded lets /readiness say "not ready" instead of refusing connections.
  logger.info("loading config", { url });
  const affinityWarnings = new SessionAffinityWarnings(logger);
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig({ configPath: options.configPath, env });
    let organization: PolicyDocument | undefined;
    const controlPlaneSettings = loaded.config.control_plane;
    if (controlPlaneSettings !== undefined) {
      // The control plane's client and document cache: imported only when the configuration names a control
      // plane, which is known only now.
      const [{ ControlPlaneSource }, { cacheFilePath }] = await Promise.all([
        import("../control-plane/control-plane-source.ts"),
        import("../control-plane/document-cache.ts"),
      ]);
      controlPlane = new ControlPlaneSource({
        settings: controlPlaneSettings,
        centralized: loaded.mode === "centralized",
        cachePath: cacheFilePath(env, controlPlaneSettings.gateway_id),
        version: GATEWAY_VERSION,
        logger,
        metrics,
        heartbeatMs: settings.controlPlaneHeartbeatMs,
        report: () => {
          const snapshot = currentConfig();
          return {
            mode: snapshot?.loaded.mode,
            health: healthLevel(healthInputs()),
            config_generation: snapshot?.generation,
            policy_generation: snapshot?.organization?.generation,
            ...metrics.requestTotals(),
          };
        },
      });
      const initial = await controlPlane.initial();
      organization = initial.policy;
      if (initial.configuration !== undefined)
        loaded = configurationFromText(initial.configuration, env, controlPlaneSettings);
    }
    // What the configuration uses, imported before anything is built from it (and nothing it does not use). The
    // exporters' modules are the export process's to import (export-process-child.ts).
    await loadTelemetryModules(loaded.config.exporters.otel);
    oauthServer = await buildOAuthServer(loaded, {
      env,
      kv,
      logger,
      publicUrl: settings.publicUrl,
      currentConfig: () => reloader?.current(),
    });
    const ready = new ConfigReloader({
      ...(oauthServer === undefined ? {} : { ownIssuer: oauthServer.ownIssuer }),
      initial: loaded,
      ...(organization === undefined ? {} : { organization }),
      env,
      allowAnonymous: settings.allowAnonymous,
      metrics,
      logger,
      onSwap: (snapshot) => {
        pools.retainOnly(
          new Set(
            [...snapshot.routes.values()].flatMap((route) => [
              route.origin,
              ...(route.instanceOrigins ?? []),
            ]),
          ),
        );
        warnAboutAuthMode(logger, snapshot, settings.allowAnonymous);
        warnAboutGroupSyncOff(logger, snapshot);
        affinityWarnings.check(snapshot.loaded.config.servers);
        applyTelemetry(snapshot);
        applyExporters(snapshot);
      },
    });
    await ready.init();
    reloader = ready;
    await controlPlane?.confirmInitial();
    applyTelemetry(ready.current());
    applyExporters(ready.current());
    // An exporter whose settings cannot make a client fails the start, as any bad configuration does.
    await auditExports.process.built();
  } catch (error) {
    controlPlane?.close();
    server.closeAllConnections();
    server.close();
    await pools.destroy();
    await kv.close().catch(() => {});
    auditExports.stopWatching();
    await audit.close(0);
    await auditExports.process.close();
    await auditTarget.close();
    metrics.close();
    memory.stop();
    throw error;
  }
  for (const warning of loaded.warnings) logger.warn("config warning", { warning });
  warnAboutAuthMode(logger, reloader.current(), settings.allowAnonymous);
  warnAboutGroupSyncOff(logger, reloader.current());
  affinityWarnings.check(loaded.config.servers);

  // Every source of configuration updates feeds the one reloader: the file (when there is one), the control plane.
  const sources: ConfigSource[] = [];
  if (reloader.reloadable)
    sources.push(fileConfigSource({ path: reloader.source, pollMs: settings.configPollMs, logger }));
  if (controlPlane !== undefined) sources.push(controlPlane);
  for (const source of sources) source.start(reloader.apply);

  // Start-up (loading and compiling the sources and the config) leaves garbage and a grown young generation behind.
  await memory.trim();
  logger.info("listening", {
    url,
    host,
    config: reloader.source,
    mode: reloader.current().loaded.mode,
    servers: reloader.current().routes.size,
    kvstore: kv.status().kind,
    audit: auditTarget.description,
    firewall: firewallSummary(reloader.current()),
    exporters: enabledExporters(loaded.config.exporters),
  });

  let closing: Promise<void> | undefined;
  // close() during a drain cuts the drain's waits short.
  let forceNow: () => void = () => {};
  const forced = new Promise<false>((resolve) => {
    forceNow = () => resolve(false);
  });
  /** `auditDeadlineMs`: how long the audit sinks may go on delivering; what is left stays in the exporters' spools. */
  const shutdown = async (force: boolean, auditDeadlineMs: number): Promise<void> => {
    for (const source of sources) source.close();
    server.close();
    if (force) {
      server.closeAllConnections();
      await pools.destroy();
    } else {
      await pools.close();
    }
    await kv.close().catch(() => {});
    // Detectors hold connections and model worker threads; a model's thread is ended by releasing its model.
    await Promise.race([reloader?.current().detectors.close(), sleep(5000)]);
    // What was recorded goes out before the process ends, bounded so a dead sink cannot hold the exit.
    auditExports.stopWatching();
    await audit.close(auditDeadlineMs);
    await auditExports.process.close();
    // The last metrics and buffered spans too, within the same kind of bound.
    if (telemetry !== undefined) await Promise.race([telemetry.shutdown(), sleep(5000)]);
    await auditTarget.close();
    metrics.close();
    memory.stop();
  };

  const drain = (): Promise<void> => {
    closing ??= (async () => {
      const started = Date.now();
      draining = true;
      logger.info("draining", { delay_ms: settings.drainDelayMs, timeout_ms: settings.drainTimeoutMs });
      // Keep serving while endpoints (Services, load balancers) notice readiness is 503.
      await Promise.race([sleep(Math.min(settings.drainDelayMs, settings.drainTimeoutMs)), forced]);
      connections.stopAccepting();
      // GET notification streams never end by themselves; the client resumes elsewhere with Last-Event-ID.
      const closedStreams = streams.closeAll("get");
      logger.info("stopped accepting connections", {
        in_flight: connections.inFlight,
        closed_get_streams: closedStreams,
      });
      const remaining = () => Math.max(0, settings.drainTimeoutMs - (Date.now() - started));
      const finished = await Promise.race([connections.requestsDone(remaining()), forced]);
      if (!finished)
        logger.warn("drain timeout reached; closing remaining connections", {
          in_flight: connections.inFlight,
        });
      // Idle keep-alive connections get a short grace to be closed by their clients (no request lost to a close
      // racing a reuse); the rest are closed by the server.
      if (finished && connections.openConnections > 0) {
        const grace = Math.min(IDLE_CONNECTION_GRACE_MS, remaining());
        const closedByClients = await Promise.race([connections.connectionsClosed(grace), forced]);
        if (!closedByClients) logger.info("closing idle connections", { open: connections.openConnections });
      }
      server.closeIdleConnections();
      // The audit sinks get what is left of the drain deadline (at least 1 s, so stdout and the file get flushed).
      await shutdown(!finished, Math.max(1000, settings.drainTimeoutMs - (Date.now() - started)));
      logger.info("drained", { forced: !finished, duration_ms: Date.now() - started });
    })();
    return closing;
  };

  return {
    url,
    reload: () => reloader?.reload(true) ?? Promise.resolve(false),
    drain,
    close: () => {
      forceNow();
      closing ??= (async () => {
        draining = true;
        await shutdown(true, 2000);
      })();
      return closing;
    },
  };
}
