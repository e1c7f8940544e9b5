// Gives memory back when the gateway turns quiet. V8 grows the young generation to its maximum under load (64 MB of
// semi-spaces here) and after start-up (compiling and type-stripping the sources), and keeps it, and keeps old
// space's high-water mark, until a memory-reducing GC runs; an idle process allocates too little for V8 to start
// one itself. So: one such GC once the configuration has loaded, and one whenever requests have been seen and then
// none for `quietMs` (30 s). A request that arrives during one waits for it (a full GC of a heap this size: tens of
// milliseconds), which only ever happens after the gateway has been quiet.
//
// The memory-reducing GC is V8's own `gc({ flavor: "last-resort" })`, reachable without starting Node with
// --expose-gc: the flag is set for as long as it takes to create one throw-away context that has `gc`, then unset,
// so no other code (no library, no vm context) ever sees a global `gc`.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

export type MemoryReducingGc = () => Promise<void>;

type V8Gc = (options: {
  type: "major";
  execution: "async";
  flavor: "last-resort";
}) => Promise<void> | undefined;

/** V8's memory-reducing full GC, or undefined when this V8 does not offer it. */
export function memoryReducingGc(): MemoryReducingGc | undefined {
  let gc: unknown;
  try {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("typeof gc === 'function' ? gc : undefined");
  } catch {
    gc = undefined;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  if (typeof gc !== "function") return undefined;
  const v8Gc = gc as V8Gc;
  return async () => {
    await v8Gc({ type: "major", execution: "async", flavor: "last-resort" });
  };
}

export interface MemoryTrimmerOptions {
  /** Default: memoryReducingGc(); nothing is trimmed when there is none. */
  gc?: MemoryReducingGc;
  /** How long without a new request before trimming. Default 30 s. */
  quietMs?: number;
  /** How often to look. Default 10 s. */
  checkMs?: number;
  /** False: no timer, the caller calls check() (tests). Default true. */
  timer?: boolean;
}

export class MemoryTrimmer {
  readonly #gc: MemoryReducingGc | undefined;
  readonly #quietChecks: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #requests = 0;
  #requestsAtLastCheck = 0;
  #quietFor = 0;
  #trimming: Promise<void> | undefined;

  constructor(options: MemoryTrimmerOptions = {}) {
    this.#gc = "gc" in options ? options.gc : memoryReducingGc();
    const checkMs = options.checkMs ?? 10_000;
    this.#quietChecks = Math.max(1, Math.ceil((options.quietMs ?? 30_000) / checkMs));
    if (this.#gc !== undefined && options.timer !== false) {
      this.#timer = setInterval(() => this.check(), checkMs);
      this.#timer.unref();
    }
  }

  /** Called for every request: cheap (one increment). */
  requestSeen(): void {
    this.#requests += 1;
  }

  /** One look: trims when requests were seen since the last trim and none in the last `quietMs`. */
  check(): void {
    if (this.#requests === 0) return;
    if (this.#requests !== this.#requestsAtLastCheck) {
      this.#requestsAtLastCheck = this.#requests;
      this.#quietFor = 0;
      return;
    }
    this.#quietFor += 1;
    if (this.#quietFor < this.#quietChecks) return;
    this.#requests = 0;
    this.#requestsAtLastCheck = 0;
    this.#quietFor = 0;
    void this.trim();
  }

  /** Trims now (one at a time); resolves when done. */
  trim(): Promise<void> {
    if (this.#gc === undefined) return Promise.resolve();
    this.#trimming ??= this.#gc()
      .catch(() => {})
      .finally(() => {
        this.#trimming = undefined;
      });
    return this.#trimming;
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}
