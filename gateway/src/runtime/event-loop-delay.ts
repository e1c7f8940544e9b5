// The worst event-loop delay of the recent past, for /metrics. A maximum since start is useless for alerting
// (one slow start-up keeps it high forever) and a maximum since the last scrape breaks as soon as two
// scrapers read it, so the figure is the maximum over the current window and the one before it: a stall is
// visible for one to two windows, whoever scrapes and however often.
import { type ELDHistogram, monitorEventLoopDelay } from "node:perf_hooks";

/**
 * How often Node samples the loop, in ms. Lateness of each sample is measured in nanoseconds, so a long stall
 * is measured exactly whatever this is; it only sets how many wake-ups the monitor costs (50 per second).
 */
const SAMPLE_RESOLUTION_MS = 20;

export class EventLoopDelayWindow {
  readonly #histogram: ELDHistogram;
  readonly #rotation: NodeJS.Timeout;
  /** Largest delay of the previous window, in nanoseconds. */
  #previousMaxNs = 0;

  constructor(windowMs: number) {
    this.#histogram = monitorEventLoopDelay({ resolution: SAMPLE_RESOLUTION_MS });
    this.#histogram.enable();
    this.#rotation = setInterval(() => {
      this.#previousMaxNs = this.#histogram.max;
      this.#histogram.reset();
    }, windowMs);
    this.#rotation.unref(); // metrics must never keep a process alive
  }

  /**
   * The largest delay over the current and the previous window, in seconds. Node records the time between two
   * samples, so an idle loop reads as the resolution itself: that part is not delay and is taken off.
   */
  maxSeconds(): number {
    const maxNs = Math.max(this.#previousMaxNs, this.#histogram.max);
    return Math.max(0, maxNs - SAMPLE_RESOLUTION_MS * 1e6) / 1e9;
  }

  stop(): void {
    clearInterval(this.#rotation);
    this.#histogram.disable();
  }
}
