// Exporters wait while the gateway is busy serving requests. Exporting costs CPU for every event (the export
// process's serialisation, compression and HTTP, and the gateway's side of handing batches to it). The export process
// already runs only on otherwise idle CPU, but that is not free on a machine whose cores are shared: every time a
// request's work wakes up, the idle-class process is preempted and leaves cold caches behind, and on a loaded
// gateway each request pays that latency. So once the gateway's event loop is busy for at least `busyUtilization`
// of the time, exporter queues start no new batch: the events wait in their spools (on disk, bounded) and go out when
// the load has dropped below `idleUtilization` (lower, so that a dip in a busy stretch does not let exports in). A
// deferral never lasts longer than `maxDeferMs`: then the queues deliver, whatever the load, until
// every exporter has caught up, so under lasting load events still arrive, at most that much later (plus the
// catch-up). Retries of a batch already handed over, and drains, never wait here.
import type { DeliveryGate, SinkStatus } from "./sink-queue.ts";

export interface DeferUnderLoadOptions {
  /** Event-loop utilisation (0 to 1) at or above which exports wait. */
  busyUtilization: number;
  /** Utilisation under which waiting exports go out (at most busyUtilization). */
  idleUtilization: number;
  /** Longest wait; after it the exporters deliver until each has caught up. 0: never wait. */
  maxDeferMs: number;
  /** Backlog, in events, under which an exporter counts as caught up. */
  caughtUpEvents: number;
  now: () => number;
  /** The gateway's event-loop utilisation since the previous call (0 to 1). */
  utilization: () => number;
  /** Told when a deferral ends (the load dropped, or it lasted maxDeferMs) and how long it lasted. */
  onResumed?: (deferredMs: number, forced: boolean) => void;
}

/**
 * Defaults: a fifth of the event loop's time busy is a gateway serving a steady stream of requests. The gateway's own
 * utilisation says little about the machine: when the upstream or another process is what saturates the cores, the
 * gateway sits at 0.3–0.6 while exporting still takes CPU from requests (a 0.5 threshold left the gate open through
 * whole bench measurements). Under a tenth, the stream has stopped or thinned out.
 */
export const EXPORT_BUSY_UTILIZATION = 0.2;
export const EXPORT_IDLE_UTILIZATION = 0.1;
/** How often the gateway samples its utilisation for the gate: short against a burst, long against its own cost. */
export const EXPORT_GATE_SAMPLE_MS = 250;

export class DeferUnderLoad implements DeliveryGate {
  readonly #options: DeferUnderLoadOptions;
  #deferredSince: number | undefined;
  /** After a deferral that ran out: delivering regardless of load until every exporter has caught up. */
  #catchingUp = false;
  #opened: Promise<void> = Promise.resolve();
  #open: () => void = () => {};

  constructor(options: DeferUnderLoadOptions) {
    this.#options = options;
  }

  get open(): boolean {
    return this.#deferredSince === undefined;
  }

  whenOpen(): Promise<void> {
    return this.#opened;
  }

  /** One sample: closes the gate under load, opens it when the load dropped or the wait ran out. */
  check(exporters: () => readonly SinkStatus[]): void {
    const utilization = this.#options.utilization();
    const busy = utilization >= this.#options.busyUtilization;
    if (this.#catchingUp) {
      // A sink whose receiver is down keeps its backlog however long the gate stays open: it does not hold it open.
      const delivering = exporters().filter((sink) => sink.state !== "retrying" && sink.state !== "failing");
      if (!delivering.every((sink) => sink.backlogEvents <= this.#options.caughtUpEvents)) return;
      this.#catchingUp = false;
    }
    if (this.#deferredSince === undefined) {
      if (busy && this.#options.maxDeferMs > 0) this.#close();
      return;
    }
    const deferredMs = this.#options.now() - this.#deferredSince;
    if (utilization < this.#options.idleUtilization) this.#resume(deferredMs, false);
    else if (deferredMs >= this.#options.maxDeferMs) {
      this.#catchingUp = true;
      this.#resume(deferredMs, true);
    }
  }

  #close(): void {
    this.#deferredSince = this.#options.now();
    this.#opened = new Promise<void>((resolve) => {
      this.#open = resolve;
    });
  }

  #resume(deferredMs: number, forced: boolean): void {
    this.#deferredSince = undefined;
    this.#open();
    this.#options.onResumed?.(deferredMs, forced);
  }
}
