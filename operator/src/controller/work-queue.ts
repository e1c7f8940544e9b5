// A keyed work queue with one worker and per-key exponential backoff, like client-go's rate-limited queue:
// a key queued while waiting or running is processed once more, never twice at the same time, and a key
// that keeps failing waits base·2^failures (capped) before its next try. Success resets its backoff.

export interface WorkQueueOptions {
  baseDelayMs: number;
  maxDelayMs: number;
}

export class WorkQueue {
  private readonly pending: string[] = [];
  private readonly queued = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly failures = new Map<string, number>();
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly handler: (key: string) => Promise<void>;
  private readonly options: WorkQueueOptions;
  private idleWaiters: (() => void)[] = [];

  constructor(handler: (key: string) => Promise<void>, options: WorkQueueOptions) {
    this.handler = handler;
    this.options = options;
  }

  get depth(): number {
    return this.pending.length + this.timers.size;
  }

  add(key: string): void {
    if (this.stopped) return;
    const timer = this.timers.get(key);
    if (timer) {
      clearTimeout(timer);
      this.timers.delete(key);
    }
    if (!this.queued.has(key)) {
      this.queued.add(key);
      this.pending.push(key);
    }
    this.kick();
  }

  /** Retries `key` after its backoff; returns the delay used. */
  retry(key: string): number {
    const failures = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, failures);
    const delay = Math.min(this.options.baseDelayMs * 2 ** (failures - 1), this.options.maxDelayMs);
    if (!this.stopped && !this.timers.has(key)) {
      const timer = setTimeout(() => {
        this.timers.delete(key);
        this.add(key);
      }, delay);
      timer.unref();
      this.timers.set(key, timer);
    }
    return delay;
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Resolves when nothing is queued or running (delayed retries do not count). */
  idle(): Promise<void> {
    if (!this.running && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking work and waits for the key being processed, if any. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.pending.length = 0;
    this.queued.clear();
    await this.running;
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.pending.length > 0 && !this.stopped) this.kick();
      else {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0 && !this.stopped) {
      const key = this.pending.shift() as string;
      this.queued.delete(key);
      await this.handler(key);
    }
  }
}
