// Which priority exporting runs at. Normally the export process runs only on otherwise idle CPU (SCHED_IDLE), so
// exporting never slows a request: a busy stretch leaves events in the spools, delivered when the load drops. Under
// load that never drops, though, idle CPU never comes, the backlog grows to the spool's cap and events would be lost;
// and on cores kept busy by other work an exporter with modest traffic would wait until its backlog is large. So once
// an exporter has been lagging (behind, at its spool cap, or with events waiting and none taken for `stalledAfterMs`)
// for `behindForMs` without a break, the process is restarted at its plain
// niceness, where it gets a share of the CPU even when every core is busy; once every exporter has caught up (no
// backlog above `caughtUpEvents`) it goes back to idle CPU only. The gap between the two bounds keeps it from
// switching back and forth.
import type { SinkStatus } from "../sink-queue.ts";

/** Defaults: long enough that a burst (or a bench round) is absorbed by the spools, short against a spool's cap. */
export const EXPORT_BEHIND_FOR_MS = 30_000;
export const EXPORT_CAUGHT_UP_EVENTS = 1_000;
/**
 * Events waiting with none taken this long beyond what a deferral under load may hold them (defer-under-load.ts)
 * make an exporter lagging; longer than a partial batch lingers (1 s).
 */
export const EXPORT_STALLED_BEYOND_DEFERRAL_MS = 5_000;

export interface ExportPriorityOptions {
  /** How long an exporter stays behind (or at its spool cap) before exporting gets a share of busy CPU. */
  behindForMs: number;
  /** Backlog, in events, under which every exporter must be before exporting goes back to idle CPU only. */
  caughtUpEvents: number;
  /** Events waiting this long with none taken make an exporter lagging, however small its backlog. */
  stalledAfterMs: number;
  now: () => number;
  /** Told of each switch: whether exporting now runs on idle CPU only, and why. */
  onChange: (idle: boolean, reason: string) => void;
}

export interface IdleSwitch {
  setIdle(idle: boolean): void;
}

export class ExportPriority {
  readonly #target: IdleSwitch;
  readonly #options: ExportPriorityOptions;
  #idle = true;
  #behindSince: number | undefined;

  constructor(target: IdleSwitch, options: ExportPriorityOptions) {
    this.#target = target;
    this.#options = options;
  }

  get idle(): boolean {
    return this.#idle;
  }

  /** Looks at the exporters' queues (stdout and the audit file are not in the export process) and switches if due. */
  check(exporters: readonly SinkStatus[]): void {
    const lagging = exporters.filter(
      (sink) =>
        sink.state === "behind" ||
        sink.state === "spool_full" ||
        (sink.state === "ok" && sink.stalledMs >= this.#options.stalledAfterMs),
    );
    if (this.#idle) {
      if (lagging.length === 0) {
        this.#behindSince = undefined;
        return;
      }
      const now = this.#options.now();
      this.#behindSince ??= now;
      if (now - this.#behindSince < this.#options.behindForMs) return;
      this.#switch(
        false,
        `${lagging.map((sink) => `${sink.name} (${sink.backlogEvents} events)`).join(", ")} behind for ${Math.round((now - this.#behindSince) / 1000)} s`,
      );
      return;
    }
    // A sink whose receiver is down keeps its backlog whatever the priority: only those delivering count here.
    const delivering = exporters.filter((sink) => sink.state !== "retrying" && sink.state !== "failing");
    if (
      lagging.length === 0 &&
      delivering.every((sink) => sink.backlogEvents <= this.#options.caughtUpEvents)
    ) {
      this.#switch(true, "every exporter caught up");
    }
  }

  #switch(idle: boolean, reason: string): void {
    this.#idle = idle;
    this.#behindSince = undefined;
    this.#target.setIdle(idle);
    this.#options.onChange(idle, reason);
  }
}
