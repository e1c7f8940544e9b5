// The call connections of one upstream, shared fairly between users. undici's own queue is first come, first served:
// a user with a backlog of calls waiting for a connection would sit in front of every other user's next call. Here a
// call is dispatched at once while a connection is free; otherwise it waits in its user's own line, and each freed
// connection goes to the next user in turn (round robin), so a light user waits for at most one call of each busy
// user, never for a whole backlog. The per-user cap on requests in flight bounds each line.

interface Waiter {
  grant: (release: () => void) => void;
}

export class FairShare {
  readonly #slots: number;
  #active = 0;
  /** Users with calls waiting, in the order they will be served; each user's calls in arrival order. */
  readonly #lines = new Map<string, Waiter[]>();

  constructor(slots: number) {
    this.#slots = slots;
  }

  /** Calls dispatched right now (for tests and metrics). */
  get active(): number {
    return this.#active;
  }

  /** Calls waiting for a connection. */
  get waiting(): number {
    let count = 0;
    for (const line of this.#lines.values()) count += line.length;
    return count;
  }

  /**
   * A connection at once, when one is free and nobody is waiting (a newcomer never jumps a line): the function that
   * gives it back (idempotent). Undefined means the caller must `wait`.
   */
  tryAcquire(): (() => void) | undefined {
    if (this.#active >= this.#slots || this.#lines.size > 0) return undefined;
    this.#active++;
    return this.#releaser();
  }

  /**
   * Resolves with the function that gives the connection back once it is `user`'s turn. `signal` abandons the wait
   * (the client went away, or the wait took too long): the promise then rejects with its reason.
   */
  wait(user: string, signal: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { grant: resolve };
      let line = this.#lines.get(user);
      if (line === undefined) {
        line = [];
        this.#lines.set(user, line);
      }
      line.push(waiter);
      signal.addEventListener(
        "abort",
        () => {
          if (this.#remove(user, waiter)) reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      this.#next();
    };
  }

  /** Gives a free connection to the first user in turn, who then goes to the back of the turn order. */
  #next(): void {
    while (this.#active < this.#slots) {
      const first = this.#lines.entries().next();
      if (first.done === true) return;
      const [user, line] = first.value;
      const waiter = line.shift();
      this.#lines.delete(user);
      if (line.length > 0) this.#lines.set(user, line); // back of the turn order
      if (waiter === undefined) continue;
      this.#active++;
      waiter.grant(this.#releaser());
    }
  }

  #remove(user: string, waiter: Waiter): boolean {
    const line = this.#lines.get(user);
    const index = line?.indexOf(waiter) ?? -1;
    if (line === undefined || index === -1) return false;
    line.splice(index, 1);
    if (line.length === 0) this.#lines.delete(user);
    return true;
  }
}
