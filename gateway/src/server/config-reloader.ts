// Load, validate and swap, atomically and one at a time. The new snapshot replaces the old in a single
// assignment, so a request sees either the old config or the new one, never a mix; requests already
// running keep the snapshot they started with. A config that fails to load is refused, logged with every
// problem, counted, and the last good one keeps serving (readiness is not affected).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ConfigError, type LoadedConfig, loadConfig } from "../config/index.ts";
import type { OwnIssuerTrust } from "../identity/token-verifier.ts";
import type { Logger } from "../log/logger.ts";
import { buildSnapshot, type ConfigSnapshot } from "../runtime/config-snapshot.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";

export interface ConfigReloaderOptions {
  initial: LoadedConfig;
  env: Record<string, string | undefined>;
  /** SVC_ALLOW_ANONYMOUS, read once at start. */
  allowAnonymous: boolean;
  metrics: GatewayMetrics;
  logger: Logger;
  /** The gateway's own authorization server (oauth_server), built once at start; its tokens are trusted. */
  ownIssuer?: OwnIssuerTrust;
  /** Told about every new snapshot (e.g. to retire connection pools of removed upstreams). */
  onSwap: (snapshot: ConfigSnapshot) => void;
}

async function contentHash(path: string): Promise<string | undefined> {
  try {
    return createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  } catch {
    return undefined;
  }
}

export class ConfigReloader {
  #current: ConfigSnapshot;
  #lastSeenHash: string | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  readonly #options: ConfigReloaderOptions;

  constructor(options: ConfigReloaderOptions) {
    this.#options = options;
    this.#current = buildSnapshot(options.initial, options.env, 1, options.allowAnonymous, options.ownIssuer);
  }

  /** Only files can be reloaded: stdin and the centralized (environment) source cannot change under us. */
  get reloadable(): boolean {
    const source = this.#current.loaded.source;
    return source !== "-" && source !== "environment";
  }

  get source(): string {
    return this.#current.loaded.source;
  }

  current = (): ConfigSnapshot => this.#current;

  /** Remembers what the initial config file looked like, so the first watch event compares against it. */
  async init(): Promise<void> {
    // A model-file detector that does not load refuses the configuration at start, as any invalid one.
    await this.#current.detectors.ready(this.#current.loaded.source);
    if (this.reloadable) this.#lastSeenHash = await contentHash(this.source);
  }

  /**
   * `force` (SIGHUP, API): reload even when the file looks unchanged. Watch events pass false, so an
   * unrelated change in the same directory does not count as a reload. Resolves true when a new config
   * is serving, false when it was refused or unchanged.
   */
  reload(force: boolean): Promise<boolean> {
    const run = this.#queue.then(() => this.#reload(force));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #reload(force: boolean): Promise<boolean> {
    if (!this.reloadable) {
      this.#options.logger.warn("config reload requested but the config did not come from a file", {
        source: this.source,
      });
      return false;
    }
    const { logger, metrics } = this.#options;
    const path = this.source;
    const hash = await contentHash(path);
    if (!force && hash === this.#lastSeenHash) return false;
    this.#lastSeenHash = hash;
    let next: ConfigSnapshot;
    try {
      const loaded = await loadConfig({ configPath: path, env: this.#options.env });
      next = buildSnapshot(
        loaded,
        this.#options.env,
        this.#current.generation + 1,
        this.#options.allowAnonymous,
        this.#options.ownIssuer,
      );
      await next.detectors.ready(path).catch(async (error: unknown) => {
        await next?.detectors.close();
        throw error;
      });
    } catch (error) {
      metrics.recordReload(false);
      const problems = error instanceof ConfigError ? error.problems : undefined;
      logger.error("config reload refused; the last good config keeps serving", {
        source: path,
        error: error instanceof Error ? error.message : String(error),
        problems,
        generation: this.#current.generation,
      });
      return false;
    }
    const previous = this.#current;
    this.#current = next;
    // What only the old configuration used (a webhook detector's connections) is released; calls in flight finish.
    void previous.detectors.close();
    metrics.recordReload(true);
    this.#options.onSwap(next);
    logger.info("config reloaded", { source: path, generation: next.generation, servers: next.routes.size });
    return true;
  }
}
