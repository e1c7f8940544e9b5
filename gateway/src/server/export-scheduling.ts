// When the audit exporters get CPU: the export process their sinks run in (export-process.ts, niced and on idle CPU
// only), the switch to a share of busy CPU when they stay behind (export-priority.ts), and the gate that holds exports
// in their spools while requests keep the gateway busy (defer-under-load.ts). The gate exists before the audit log,
// which asks it before each batch; the two samplers start once the log is there to read its exporters' status from.
import {
  DeferUnderLoad,
  EXPORT_BUSY_UTILIZATION,
  EXPORT_GATE_SAMPLE_MS,
  EXPORT_IDLE_UTILIZATION,
} from "../audit/defer-under-load.ts";
import {
  EXPORT_BEHIND_FOR_MS,
  EXPORT_CAUGHT_UP_EVENTS,
  EXPORT_STALLED_BEYOND_DEFERRAL_MS,
  ExportPriority,
} from "../audit/exporters/export-priority.ts";
import { ExportProcess } from "../audit/exporters/export-process.ts";
import type { SinkStatus } from "../audit/sink-queue.ts";
import type { Logger } from "../log/logger.ts";
import type { GatewaySettings } from "./settings.ts";

/** How often the export process's priority is weighed against the exporters' backlog. */
const PRIORITY_CHECK_MS = 1000;

export class ExportScheduling {
  /** Asked by the audit log's exporter queues before each batch. */
  readonly gate: DeferUnderLoad;
  /** Where the exporters' sinks run. */
  readonly process: ExportProcess;
  readonly #priority: ExportPriority;
  /** Niceness 0 asks for exporting at the same priority as requests: then not on idle CPU only either. */
  readonly #onIdleCpu: boolean;
  #timers: NodeJS.Timeout[] = [];

  constructor(settings: Pick<GatewaySettings, "auditExportDeferMs" | "auditExportNiceness">, logger: Logger) {
    let lastUtilization = performance.eventLoopUtilization();
    // Exports wait in their spools while requests keep the event loop busy, for at most SVC_AUDIT_EXPORT_DEFER_SECONDS.
    this.gate = new DeferUnderLoad({
      busyUtilization: EXPORT_BUSY_UTILIZATION,
      idleUtilization: EXPORT_IDLE_UTILIZATION,
      maxDeferMs: settings.auditExportDeferMs,
      caughtUpEvents: EXPORT_CAUGHT_UP_EVENTS,
      now: Date.now,
      utilization: () => {
        const current = performance.eventLoopUtilization();
        const since = performance.eventLoopUtilization(current, lastUtilization);
        lastUtilization = current;
        return since.utilization;
      },
      onResumed: (deferredMs, forced) =>
        logger.debug(
          forced
            ? "audit exports waited their longest under load: delivering until caught up"
            : "audit exports resume: the load dropped",
          { deferred_ms: deferredMs },
        ),
    });
    this.#onIdleCpu = settings.auditExportNiceness > 0;
    this.process = new ExportProcess({
      niceness: settings.auditExportNiceness,
      idle: this.#onIdleCpu,
      onStopped: (reason) =>
        logger.error("the audit export process stopped; the next export starts a new one", { reason }),
      onUnreadable: (sink, lines) =>
        logger.error(
          "unreadable lines in an exporter's audit spool were skipped: no retry could deliver them",
          {
            sink,
            lines,
          },
        ),
      onStarted: (niceness, idle) => {
        if (niceness === undefined)
          logger.warn(
            "the audit export process runs at normal priority: it could not lower its own (not Linux, or refused)",
            { wanted: settings.auditExportNiceness },
          );
        else if (this.#priority.idle && this.#onIdleCpu && !idle)
          logger.warn(
            "the audit export process could not take idle-only scheduling (SCHED_IDLE, set with util-linux's chrt); it runs niced only",
            { niceness },
          );
        else logger.info("audit export process started", { niceness, idle_cpu_only: idle });
      },
    });
    this.#priority = new ExportPriority(this.process, {
      behindForMs: EXPORT_BEHIND_FOR_MS,
      caughtUpEvents: EXPORT_CAUGHT_UP_EVENTS,
      stalledAfterMs: settings.auditExportDeferMs + EXPORT_STALLED_BEYOND_DEFERRAL_MS,
      now: Date.now,
      onChange: (idle, reason) =>
        idle
          ? logger.info("audit exporters caught up: the export process runs on idle CPU only again", {
              reason,
            })
          : logger.warn(
              "audit exporters stay behind under load: the export process now gets a share of busy CPU, at its niceness",
              { reason, niceness: settings.auditExportNiceness },
            ),
    });
  }

  /** Starts sampling: `sinkStatus` is the audit log's, of every sink (the exporters' are picked out here). */
  watch(sinkStatus: () => SinkStatus[]): void {
    const exporters = (): SinkStatus[] | undefined => {
      const names = this.process.sinkNames();
      // No exporter, nothing to weigh: the audit log's status is not even asked for.
      if (names.size === 0) return undefined;
      return sinkStatus().filter((status) => names.has(status.name));
    };
    const priority = setInterval(() => {
      if (!this.#onIdleCpu) return;
      const statuses = exporters();
      if (statuses !== undefined) this.#priority.check(statuses);
    }, PRIORITY_CHECK_MS);
    const gate = setInterval(() => {
      if (this.process.sinkNames().size === 0) return;
      this.gate.check(() => exporters() ?? []);
    }, EXPORT_GATE_SAMPLE_MS);
    priority.unref();
    gate.unref();
    this.#timers = [priority, gate];
  }

  stopWatching(): void {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
  }
}
