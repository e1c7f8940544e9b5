// Load, validate and swap, atomically and one at a time, whatever the update's source (config-source.ts: the
// file, or a control plane's organization policy or configuration). The new snapshot replaces the old in a single
// assignment, so a request sees either the old config or the new one, never a mix; requests already
// running keep the snapshot they started with. A config that fails to load is refused, logged with every
// problem, counted, and the last good one keeps serving (readiness is not affected).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ConfigError, type LoadedConfig, loadConfig } from "../config/index.ts";
import type { PolicyDocument } from "../config/organization-policy.ts";
import { CONTROL_PLANE_SOURCE, configurationFromText } from "../control-plane/centralized-config.ts";
import type { OwnIssuerTrust } from "../identity/token-verifier.ts";
import type { Logger } from "../log/logger.ts";
import { buildSnapshot, type ConfigSnapshot } from "../runtime/config-snapshot.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import type { ConfigUpdate } from "./config-source.ts";

export interface ConfigReloaderOptions {
  initial: LoadedConfig;
  /** The organization policy the control plane (or its cache) gave at start; none in standalone mode. */
  organization?: PolicyDocument;
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
    this.#current = buildSnapshot(
      options.initial,
      options.env,
      1,
      options.allowAnonymous,
      options.ownIssuer,
      options.organization,
    );
  }

  /** Only files can be reloaded: stdin and the centralized sources cannot change under us as files. */
  get reloadable(): boolean {
    const source = this.#current.loaded.source;
    return source !== "-" && source !== "environment" && source !== CONTROL_PLANE_SOURCE;
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
    return this.apply({ kind: "file", force });
  }

  /** Applies an update from any source (config-source.ts), one at a time. */
  apply = (update: ConfigUpdate): Promise<boolean> => {
    const run = this.#queue.then(() => {
      if (update.kind === "file") return this.#reload(update.force);
      if (update.kind === "policy")
        return this.#swap(this.#current.loaded, update.document, "organization policy");
      return this.#swapConfiguration(update.text);
    });
    this.#queue = run.catch(() => {});
    return run;
  };

  /** Centralized mode: the control plane's configuration, validated with the same schema before it replaces anything. */
  async #swapConfiguration(text: string): Promise<boolean> {
    const controlPlane = this.#current.loaded.config.control_plane;
    let loaded: LoadedConfig;
    try {
      if (controlPlane === undefined)
        throw new Error("a configuration from a control plane needs control_plane");
      loaded = configurationFromText(text, this.#options.env, controlPlane);
    } catch (error) {
      this.#refused(error, CONTROL_PLANE_SOURCE);
      return false;
    }
    return this.#swap(loaded, this.#current.organization, "configuration");
  }

  async #reload(force: boolean): Promise<boolean> {
    if (!this.reloadable) {
      this.#options.logger.warn("config reload requested but the config did not come from a file", {
        source: this.source,
      });
      return false;
    }
    const path = this.source;
    const hash = await contentHash(path);
    if (!force && hash === this.#lastSeenHash) return false;
    this.#lastSeenHash = hash;
    let loaded: LoadedConfig;
    try {
      loaded = await loadConfig({ configPath: path, env: this.#options.env });
      // The deployment mode and the control plane are chosen at start (the SPEC defines no runtime move).
      const before = JSON.stringify(this.#current.loaded.config.control_plane);
      if (JSON.stringify(loaded.config.control_plane) !== before) {
        throw new ConfigError(
          [
            {
              path: "control_plane",
              message: "cannot change while the gateway runs; restart the gateway to apply it",
            },
          ],
          path,
        );
      }
    } catch (error) {
      this.#refused(error, path);
      return false;
    }
    return this.#swap(loaded, this.#current.organization, "file");
  }

  /** Builds the snapshot of `loaded` with `organization` merged in and swaps it in; refused when it does not build. */
  async #swap(
    loaded: LoadedConfig,
    organization: PolicyDocument | undefined,
    cause: "file" | "organization policy" | "configuration",
  ): Promise<boolean> {
    const { logger, metrics } = this.#options;
    const path = loaded.source;
    let next: ConfigSnapshot;
    try {
      next = buildSnapshot(
        loaded,
        this.#options.env,
        this.#current.generation + 1,
        this.#options.allowAnonymous,
        this.#options.ownIssuer,
        organization,
      );
      await next.detectors.ready(path).catch(async (error: unknown) => {
        await next?.detectors.close();
        throw error;
      });
    } catch (error) {
      this.#refused(error, cause === "organization policy" ? CONTROL_PLANE_SOURCE : path);
      return false;
    }
    const previous = this.#current;
    this.#current = next;
    // What only the old configuration used (a webhook detector's connections) is released; calls in flight finish.
    void previous.detectors.close();
    metrics.recordReload(true);
    this.#options.onSwap(next);
    logger.info("config reloaded", {
      source: path,
      cause,
      generation: next.generation,
      servers: next.routes.size,
      ...(organization === undefined
        ? {}
        : { organization_id: organization.organization_id, policy_generation: organization.generation }),
    });
    return true;
  }

  #refused(error: unknown, source: string): void {
    this.#options.metrics.recordReload(false);
    const problems = error instanceof ConfigError ? error.problems : undefined;
    this.#options.logger.error("config reload refused; the last good config keeps serving", {
      source,
      error: error instanceof Error ? error.message : String(error),
      problems,
      generation: this.#current.generation,
    });
  }
}
