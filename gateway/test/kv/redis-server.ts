// Spawns a real redis-server on a free loopback port for tests; can kill it and bring it back on the same port.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { freePort } from "../../bench/free-port.ts";

export class RedisServer {
  readonly port: number;
  #process: ChildProcess | undefined;

  private constructor(port: number) {
    this.port = port;
  }

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.#process?.pid;
  }

  /** Starts (again) on the same port; resolves once Redis accepts connections. */
  async restart(): Promise<void> {
    if (this.#process) throw new Error("redis-server is already running");
    const child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#process = child;
    let output = "";
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) {
          child.stdout?.off("data", onData);
          child.stdout?.resume();
          resolve();
        }
      };
      child.stdout?.on("data", onData);
      child.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
      child.once("error", reject);
    });
  }

  /** SIGKILL: an abrupt outage, no goodbye on the connections. */
  async kill(): Promise<void> {
    const child = this.#process;
    if (!child) return;
    this.#process = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
  }

  /** SIGSTOP / SIGCONT: Redis hangs with its connections open, the case command timeouts exist for. */
  pause(): void {
    this.#process?.kill("SIGSTOP");
  }

  resume(): void {
    this.#process?.kill("SIGCONT");
  }
}
