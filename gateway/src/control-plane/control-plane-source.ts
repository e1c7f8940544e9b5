// The control plane as a configuration source (server/config-source.ts). At start it activates and fetches the
// organization policy (and in centralized mode the configuration); then one long poll per document keeps it current:
// the request carries If-None-Match and the control plane holds it until the document changes or `wait` seconds pass
// (min(cache_ttl, 25 s), so the gateway revalidates at least every cache_ttl), which is how a change reaches every
// gateway within a second or two. A heartbeat reports health, version, generations and counters.
//
// Fail static: when the control plane cannot be reached, the last good documents keep serving, /health says
// DEGRADED with the policy's age, and polling goes on (backing off to 5 s). The last good documents are also in a
// local cache file (document-cache.ts), so a gateway restarted during an outage starts with them. A document that
// does not validate is refused, logged and counted, never applied; the last good one keeps serving.
import { setTimeout as sleep } from "node:timers/promises";
import { type PolicyDocument, policyDocumentSchema } from "../config/organization-policy.ts";
import type { ControlPlaneConfig } from "../config/schema.ts";
import type { Logger } from "../log/logger.ts";
import type { GatewayMetrics } from "../runtime/metrics.ts";
import type { ApplyUpdate, ConfigSource } from "../server/config-source.ts";
import { ControlPlaneClient, ControlPlaneError, type DocumentKind } from "./api-client.ts";
import { type CacheContents, readCache, writeCache } from "./document-cache.ts";

/** Longest a long poll is held open: below common proxy idle timeouts. */
const MAX_WAIT_SECONDS = 25;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 5000;
const MIN_POLL_INTERVAL_MS = 1000;

export interface ControlPlaneStatus {
  state: "connected" | "unreachable";
  organizationId: string | undefined;
  policyGeneration: number | undefined;
  /** Seconds since the policy serving now was received from the control plane. */
  policyAgeSeconds: number | undefined;
  /** Documents refused as invalid since start. */
  refusedDocuments: number;
  lastError: string | undefined;
}

export interface ControlPlaneSourceOptions {
  settings: ControlPlaneConfig;
  centralized: boolean;
  cachePath: string;
  version: string;
  logger: Logger;
  metrics: GatewayMetrics;
  /** What the heartbeat reports besides the version (health level, generation, counters). */
  report: () => Record<string, unknown>;
  heartbeatMs: number;
}

export interface InitialDocuments {
  policy: PolicyDocument;
  /** Centralized mode: the configuration's YAML text (validated by the caller). */
  configuration?: string;
  /** true when the control plane could not be reached and the documents come from the cache file. */
  fromCache: boolean;
}

export class ControlPlaneSource implements ConfigSource {
  readonly #options: ControlPlaneSourceOptions;
  readonly #client: ControlPlaneClient;
  readonly #abort = new AbortController();
  #cache: CacheContents;
  #activated = false;
  #reachable = true;
  #lastError: string | undefined;
  #refused = 0;
  #policy: PolicyDocument | undefined;
  #policyReceivedAt: number | undefined;
  /** The ETag of the last document seen (applied or refused), per kind: what the next poll revalidates. */
  readonly #seen: Partial<Record<DocumentKind, string>> = {};
  /** Documents fetched but not yet known to be applied: cached only once the reloader has accepted them. */
  readonly #pending: Partial<Record<DocumentKind, CacheContents["policy"]>> = {};
  #policyCandidate: PolicyDocument | undefined;

  constructor(options: ControlPlaneSourceOptions) {
    this.#options = options;
    this.#client = new ControlPlaneClient(options.settings);
    this.#cache = { gateway_id: options.settings.gateway_id };
  }

  /**
   * The documents to start with: from the control plane, else from the cache file. Throws when the control plane
   * refuses this gateway (a wrong key or id is a configuration error, not an outage) or when neither has them.
   */
  async initial(): Promise<InitialDocuments> {
    const { logger, cachePath, settings } = this.#options;
    try {
      await this.#activate();
      const policy = await this.#fetchPolicy(undefined, 0);
      if (policy === undefined)
        throw new ControlPlaneError("the control plane sent no valid organization policy");
      const configuration = this.#options.centralized
        ? await this.#fetchConfiguration(undefined, 0)
        : undefined;
      if (this.#options.centralized && configuration === undefined)
        throw new ControlPlaneError("the control plane sent no configuration");
      return { policy, ...(configuration === undefined ? {} : { configuration }), fromCache: false };
    } catch (error) {
      if (error instanceof ControlPlaneError && isRefusal(error.status)) throw error;
      // No "keeps serving" log here: what happens next (the cache, or no start) is logged below.
      this.#reachable = false;
      this.#lastError = error instanceof Error ? error.message : String(error);
      const cached = await readCache(cachePath, settings.gateway_id).catch((cacheError: unknown) => {
        logger.error("control plane cache file unreadable", { path: cachePath, error: String(cacheError) });
        return undefined;
      });
      const policy = policyDocumentSchema.safeParse(cached?.policy?.body);
      const configuration = cached?.configuration?.body;
      const otherOrganization =
        policy.success &&
        settings.organization_id !== undefined &&
        policy.data.organization_id !== settings.organization_id;
      if (
        cached === undefined ||
        !policy.success ||
        otherOrganization ||
        (this.#options.centralized && typeof configuration !== "string")
      ) {
        throw new ControlPlaneError(
          `${(error as Error).message}; and no usable cached policy in ${cachePath}, so the gateway cannot start without the control plane`,
        );
      }
      logger.warn("control plane unreachable: starting from the cached documents (fail static)", {
        path: cachePath,
        policy_generation: policy.data.generation,
        received_at: new Date(cached.policy?.receivedAt ?? 0).toISOString(),
      });
      this.#cache = cached;
      this.#policy = policy.data;
      this.#policyReceivedAt = cached.policy?.receivedAt;
      this.#seen.policy = cached.policy?.etag;
      if (cached.configuration !== undefined) this.#seen.configuration = cached.configuration.etag;
      return {
        policy: policy.data,
        ...(typeof configuration === "string" ? { configuration } : {}),
        fromCache: true,
      };
    }
  }

  start(apply: ApplyUpdate): void {
    void this.#poll("policy", apply);
    if (this.#options.centralized) void this.#poll("configuration", apply);
    void this.#heartbeats();
  }

  close(): void {
    this.#abort.abort();
  }

  status(): ControlPlaneStatus {
    return {
      state: this.#reachable ? "connected" : "unreachable",
      organizationId: this.#client.organizationId,
      policyGeneration: this.#policy?.generation,
      policyAgeSeconds:
        this.#policyReceivedAt === undefined
          ? undefined
          : Math.max(0, Math.round((Date.now() - this.#policyReceivedAt) / 1000)),
      refusedDocuments: this.#refused,
      lastError: this.#lastError,
    };
  }

  async #activate(): Promise<void> {
    if (this.#activated) return;
    const activation = await this.#client.activate(this.#options.version);
    this.#activated = true;
    this.#options.logger.info("activated with the control plane", {
      gateway_id: activation.gateway_id,
      organization_id: activation.organization_id,
    });
  }

  async #poll(kind: DocumentKind, apply: ApplyUpdate): Promise<void> {
    const signal = this.#abort.signal;
    const wait = Math.min(this.#options.settings.cache_ttl, MAX_WAIT_SECONDS);
    let retryMs = RETRY_MIN_MS;
    while (!signal.aborted) {
      // After a failure the first request is a plain revalidation, not a long poll: the control plane being back
      // shows in /health at once, not when the poll's wait is over.
      const thisWait = this.#reachable ? wait : 0;
      const started = Date.now();
      try {
        await this.#activate();
        let changed: boolean;
        if (kind === "policy") {
          const document = await this.#fetchPolicy(this.#seen.policy, thisWait);
          changed = document !== undefined;
          if (document !== undefined) await this.#applied(kind, await apply({ kind, document }));
        } else {
          const text = await this.#fetchConfiguration(this.#seen.configuration, thisWait);
          changed = text !== undefined;
          if (text !== undefined) await this.#applied(kind, await apply({ kind, text }));
        }
        this.#markReachable();
        retryMs = RETRY_MIN_MS;
        // A control plane that answers "unchanged" without holding the poll (busy, or not long-polling) is asked
        // again after a pause, not in a tight loop.
        if (!changed && Date.now() - started < MIN_POLL_INTERVAL_MS)
          await sleep(MIN_POLL_INTERVAL_MS, undefined, { signal }).catch(() => {});
      } catch (error) {
        if (signal.aborted) return;
        this.#markUnreachable(error);
        await sleep(retryMs, undefined, { signal }).catch(() => {});
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
  }

  /** The policy when it changed and validates; undefined when unchanged or refused. */
  async #fetchPolicy(etag: string | undefined, wait: number): Promise<PolicyDocument | undefined> {
    const result = await this.#client.fetch("policy", etag, wait);
    if (result.status === "unchanged") return undefined;
    this.#seen.policy = result.etag;
    const parsed = policyDocumentSchema.safeParse(result.body);
    const organization = this.#client.organizationId;
    if (!parsed.success || parsed.data.organization_id !== organization) {
      this.#refuse(
        "policy",
        parsed.success
          ? `the policy is for organization ${parsed.data.organization_id}, not ${organization}`
          : parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; "),
      );
      return undefined;
    }
    this.#pending.policy = { etag: result.etag, receivedAt: Date.now(), body: parsed.data };
    this.#policyCandidate = parsed.data;
    return parsed.data;
  }

  async #fetchConfiguration(etag: string | undefined, wait: number): Promise<string | undefined> {
    const result = await this.#client.fetch("configuration", etag, wait);
    if (result.status === "unchanged") return undefined;
    this.#seen.configuration = result.etag;
    const yaml = (result.body as { yaml?: unknown } | undefined)?.yaml;
    if (typeof yaml !== "string") {
      this.#refuse("configuration", "the configuration document has no yaml text");
      return undefined;
    }
    this.#pending.configuration = { etag: result.etag, receivedAt: Date.now(), body: yaml };
    return yaml;
  }

  /** After the reloader answered: an applied document is remembered and cached; a refused one is counted. */
  async #applied(kind: DocumentKind, ok: boolean): Promise<void> {
    const pending = this.#pending[kind];
    delete this.#pending[kind];
    if (!ok) {
      this.#refuse(kind, "the gateway refused it (see the config reload error above)");
      return;
    }
    this.#options.metrics.recordControlPlaneDocument(kind === "policy" ? "policy" : "config", "applied");
    if (pending === undefined) return;
    if (kind === "policy") {
      this.#policy = this.#policyCandidate;
      this.#policyReceivedAt = pending.receivedAt;
    }
    await this.#persist(kind, pending);
  }

  /** At start the documents are applied by building the first snapshot: the caller confirms them here. */
  async confirmInitial(): Promise<void> {
    for (const kind of ["policy", "configuration"] as const) {
      const pending = this.#pending[kind];
      if (pending === undefined) continue;
      delete this.#pending[kind];
      if (kind === "policy") {
        this.#policy = this.#policyCandidate;
        this.#policyReceivedAt = pending.receivedAt;
      }
      await this.#persist(kind, pending);
    }
  }

  async #persist(kind: DocumentKind, document: NonNullable<CacheContents["policy"]>): Promise<void> {
    this.#cache = { ...this.#cache, [kind]: document };
    await writeCache(this.#options.cachePath, this.#cache).catch((error: unknown) =>
      this.#options.logger.error(
        "cannot write the control plane cache file; a restart during an outage would not start",
        {
          path: this.#options.cachePath,
          error: String(error),
        },
      ),
    );
  }

  #refuse(kind: DocumentKind, reason: string): void {
    this.#refused++;
    this.#options.metrics.recordControlPlaneDocument(kind === "policy" ? "policy" : "config", "refused");
    this.#options.logger.error("control plane document refused; the last good one keeps serving", {
      kind,
      reason,
    });
  }

  #markReachable(): void {
    if (!this.#reachable) this.#options.logger.info("control plane reachable again");
    this.#reachable = true;
    this.#lastError = undefined;
  }

  #markUnreachable(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (this.#reachable || message !== this.#lastError) {
      this.#options.logger.warn("control plane unreachable; the last good policy keeps serving", {
        error: message,
      });
    }
    this.#reachable = false;
    this.#lastError = message;
  }

  async #heartbeats(): Promise<void> {
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.#activate();
        await this.#client.heartbeat({ version: this.#options.version, ...this.#options.report() });
      } catch (error) {
        if (signal.aborted) return;
        this.#options.logger.debug("heartbeat failed", { error: String(error) });
      }
      await sleep(this.#options.heartbeatMs, undefined, { signal }).catch(() => {});
    }
  }
}

/** 401 and 403: the control plane refuses this gateway; 404: it does not know it. */
function isRefusal(status: number | undefined): boolean {
  return status === 401 || status === 403 || status === 404;
}
