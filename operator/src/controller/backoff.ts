// Retry delays for a watch that keeps failing (an unreachable API server): exponential from `baseMs`,
// capped at `maxMs`, and jittered downwards by up to `jitter` (a fraction) so that the operator's watches,
// and several operator replicas, do not retry in lock-step. With jitter below one half every gap is still
// longer than the one before until the cap. A watch that has run for `resetAfterMs` without failing starts
// over at `baseMs`, so a later outage is noticed quickly again.

export interface BackoffSchedule {
  baseMs: number;
  maxMs: number;
  /** 0 ≤ jitter < 0.5: each delay is drawn from [delay·(1 − jitter), delay]. */
  jitter: number;
  resetAfterMs: number;
}

export const WATCH_BACKOFF: BackoffSchedule = {
  baseMs: 1_000,
  maxMs: 30_000,
  jitter: 0.2,
  resetAfterMs: 60_000,
};

/** The un-jittered delay before retry number `attempt` (0 for the first retry). */
export function backoffCeiling(schedule: BackoffSchedule, attempt: number): number {
  return Math.min(schedule.baseMs * 2 ** Math.min(attempt, 52), schedule.maxMs);
}

export function validateSchedule(schedule: BackoffSchedule): void {
  const problems: string[] = [];
  if (!(schedule.baseMs > 0)) problems.push(`baseMs must be positive (was ${schedule.baseMs})`);
  if (!(schedule.maxMs >= schedule.baseMs))
    problems.push(`maxMs must be at least baseMs (was ${schedule.maxMs})`);
  if (!(schedule.jitter >= 0 && schedule.jitter < 0.5))
    problems.push(`jitter must be in [0, 0.5) (was ${schedule.jitter})`);
  if (!(schedule.resetAfterMs > 0))
    problems.push(`resetAfterMs must be positive (was ${schedule.resetAfterMs})`);
  if (problems.length > 0) throw new Error(`invalid backoff schedule: ${problems.join("; ")}`);
}

/** One failing thing's retry state. `failed()` returns how long to wait before the next try. */
export class Backoff {
  private readonly schedule: BackoffSchedule;
  private readonly random: () => number;
  private readonly now: () => number;
  private attempt = 0;
  /** When the last retry was due: the time since then is how long the thing ran without failing. */
  private retryAt: number | undefined;

  constructor(
    schedule: BackoffSchedule = WATCH_BACKOFF,
    random: () => number = Math.random,
    now: () => number = Date.now,
  ) {
    validateSchedule(schedule);
    this.schedule = schedule;
    this.random = random;
    this.now = now;
  }

  get failures(): number {
    return this.attempt;
  }

  failed(): number {
    const now = this.now();
    if (this.retryAt !== undefined && now - this.retryAt > this.schedule.resetAfterMs) this.reset();
    const ceiling = backoffCeiling(this.schedule, this.attempt);
    this.attempt += 1;
    const delay = Math.round(ceiling * (1 - this.schedule.jitter * this.random()));
    this.retryAt = now + delay;
    return delay;
  }

  reset(): void {
    this.attempt = 0;
    this.retryAt = undefined;
  }
}
