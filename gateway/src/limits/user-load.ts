// What one user holds open on this gateway process right now: requests in flight (POST and DELETE, an SSE answer
// until it ends) and GET notification streams. Both hold an upstream connection for as long as they last, so without
// a cap one user could take every connection of an upstream's pool and starve everybody else's calls. Counted per
// process (the resource protected, the connection pool, is per process too), so no KV round trip is needed.

export interface UserLoadLimits {
  /** POST/DELETE requests one user may have in flight at once on this process. */
  maxInFlight: number;
  /** GET notification streams one user may hold open at once on this process. */
  maxStreams: number;
}

export type LoadKind = "request" | "stream";

interface Load {
  request: number;
  stream: number;
}

export class UserLoad {
  readonly #limits: UserLoadLimits;
  readonly #byUser = new Map<string, Load>();

  constructor(limits: UserLoadLimits) {
    this.#limits = limits;
  }

  get limits(): UserLoadLimits {
    return this.#limits;
  }

  /**
   * Takes one slot of `kind` for `user` (a principalKey); returns the function that gives it back (idempotent), or
   * undefined when the user is at the cap.
   */
  acquire(user: string, kind: LoadKind): (() => void) | undefined {
    let load = this.#byUser.get(user);
    const cap = kind === "request" ? this.#limits.maxInFlight : this.#limits.maxStreams;
    if ((load?.[kind] ?? 0) >= cap) return undefined;
    if (load === undefined) {
      load = { request: 0, stream: 0 };
      this.#byUser.set(user, load);
    }
    load[kind]++;
    let released = false;
    const held = load;
    return () => {
      if (released) return;
      released = true;
      held[kind]--;
      // Users come and go: only those holding something stay in the map.
      if (held.request === 0 && held.stream === 0) this.#byUser.delete(user);
    };
  }

  /** Slots `user` holds now (for tests and metrics). */
  held(user: string): Load {
    const load = this.#byUser.get(user);
    return { request: load?.request ?? 0, stream: load?.stream ?? 0 };
  }
}
