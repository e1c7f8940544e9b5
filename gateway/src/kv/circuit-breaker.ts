// Circuit breaker in front of Redis: after `failureThreshold` consecutive failures it opens and callers fail
// fast; after `openMs` (or at once when the connection comes back) it goes half_open and sends one probe;
// the probe's success closes it, its failure opens it again for another `openMs`.
import type { BreakerState } from "./kv-store.ts";

export interface CircuitBreakerOptions {
  failureThreshold: number;
  openMs: number;
  /** The half_open probe (a PING). Only it reaches the backend while the breaker is not closed. */
  probe: () => Promise<void>;
  onChange?: (state: BreakerState, lastError: string | undefined) => void;
}

export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions;
  #state: BreakerState = "closed";
  #failures = 0;
  #timer: NodeJS.Timeout | undefined;
  #disposed = false;
  lastError: string | undefined;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** Whether a call may go to the backend now. */
  allows(): boolean {
    return this.#state === "closed";
  }

  success(): void {
    // A late success of a call sent while closed does not close an open breaker: only the probe does.
    if (this.#state === "closed") this.#failures = 0;
  }

  failure(error: unknown): void {
    this.lastError = describe(error);
    if (this.#state !== "closed") return;
    this.#failures += 1;
    if (this.#failures >= this.#options.failureThreshold) this.#open();
  }

  /** The backend looks reachable again (e.g. the connection is re-established): probe now, not after openMs. */
  probeNow(): void {
    if (this.#state === "open") this.#halfOpen();
  }

  dispose(): void {
    this.#disposed = true;
    clearTimeout(this.#timer);
  }

  #open(): void {
    this.#set("open");
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#halfOpen(), this.#options.openMs);
    this.#timer.unref();
  }

  #halfOpen(): void {
    if (this.#disposed) return;
    clearTimeout(this.#timer);
    this.#set("half_open");
    this.#options.probe().then(
      () => {
        if (this.#disposed || this.#state !== "half_open") return;
        this.#failures = 0;
        this.lastError = undefined;
        this.#set("closed");
      },
      (error: unknown) => {
        if (this.#disposed || this.#state !== "half_open") return;
        this.lastError = describe(error);
        this.#open();
      },
    );
  }

  #set(state: BreakerState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#options.onChange?.(state, this.lastError);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
