import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

// What a drain waits for, at the socket level: requests in flight (streams included) and client connections still
// open. Stopping is done in two steps because of the HTTP/1.1 keep-alive race: a server that closes an idle
// connection at the moment the client reuses it for a request fails that request (a POST is not retried). So the
// listener stops first and idle connections are left open; a request arriving on one is still served, with
// `Connection: close`, and well-behaved clients close idle connections themselves after their own keep-alive
// timeout (undici: 4 s). Only what is still open after a bounded grace is closed by the server.

/** How long idle client connections get to be closed by their clients: above undici's 4 s keep-alive timeout. */
export const IDLE_CONNECTION_GRACE_MS = 5000;

export class ConnectionDrain {
  #inFlight = 0;
  readonly #sockets = new Set<Socket>();
  #onChange: (() => void) | undefined;

  readonly #server: Server;

  constructor(server: Server) {
    this.#server = server;
    server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once("close", () => {
        this.#sockets.delete(socket);
        this.#onChange?.();
      });
    });
  }

  /** Counts a request until its response is closed (finished or aborted). */
  track(_req: IncomingMessage, res: ServerResponse): void {
    this.#inFlight++;
    res.once("close", () => {
      this.#inFlight--;
      this.#onChange?.();
    });
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get openConnections(): number {
    return this.#sockets.size;
  }

  /** No new connections; open ones, idle keep-alive ones included, stay (http.Server#close would cut idle ones). */
  stopAccepting(): void {
    NetServer.prototype.close.call(this.#server);
  }

  /** Resolves true when nothing is in flight, false at `timeoutMs`. */
  requestsDone(timeoutMs: number): Promise<boolean> {
    return this.#until(() => this.#inFlight === 0, timeoutMs);
  }

  /** Resolves true when every client connection is closed, false at `timeoutMs`. */
  connectionsClosed(timeoutMs: number): Promise<boolean> {
    return this.#until(() => this.#sockets.size === 0, timeoutMs);
  }

  #until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
    if (condition()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      // Unref'd: a drain cut short by a forced close must not keep the process alive until this timer fires.
      const timer = setTimeout(() => finish(false), timeoutMs).unref();
      const finish = (done: boolean) => {
        clearTimeout(timer);
        this.#onChange = undefined;
        resolve(done);
      };
      this.#onChange = () => {
        if (condition()) finish(true);
      };
    });
  }
}
