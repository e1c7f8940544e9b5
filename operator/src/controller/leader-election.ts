import type { V1Lease } from "@kubernetes/client-node";
import { describeError, isConflict, type KubeClient } from "../kube/kube-client.ts";
import type { Logger } from "./log.ts";

// Leader election on a coordination.k8s.io/v1 Lease, the way client-go does it: the holder renews
// renewTime every retryPeriod; a candidate takes the lease over once the record it observed has not changed
// for leaseDuration, measured on its own clock (so clock skew between nodes does not matter); every write
// carries the resourceVersion it read, so two candidates cannot both win (the loser gets 409). A leader that
// cannot renew within renewDeadline steps down. On shutdown the leader releases the lease at once.

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

export class LeaderElector {
  private readonly kube: KubeClient;
  private readonly options: LeaderElectionOptions;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private lastRenew = 0;
  private observedRecord = "";
  private observedAt = 0;
  private stopped = false;
  private tick: Promise<void> = Promise.resolve();

  constructor(kube: KubeClient, options: LeaderElectionOptions, log: Logger) {
    this.kube = kube;
    this.options = options;
    this.log = log;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops campaigning; a leader releases the lease so another instance takes over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.tick;
    if (this.leading) {
      await this.release();
      this.setLeading(false);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick = this.tryAcquireOrRenew().finally(() => this.schedule(this.options.retryPeriodMs));
    }, delayMs);
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.log.info(leading ? "became leader" : "stopped leading", {
      lease: `${this.options.namespace}/${this.options.name}`,
    });
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private leaseSpec(now: Date, previous: V1Lease | undefined): V1Lease["spec"] {
    const sameHolder = previous?.spec?.holderIdentity === this.options.identity;
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.options.leaseDurationMs / 1000)),
      acquireTime: sameHolder ? (previous?.spec?.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions: (previous?.spec?.leaseTransitions ?? 0) + (sameHolder || !previous ? 0 : 1),
    };
  }

  /** No lease call may outlive the renew deadline: a hung request must not keep a stale leader leading. */
  private bounded<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("lease request timed out")), this.options.renewDeadlineMs);
    });
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }

  private async tryAcquireOrRenew(): Promise<void> {
    const { namespace, name, identity } = this.options;
    const now = Date.now();
    // A leader that has not renewed in time (a stalled event loop, an unreachable API server) must assume
    // another instance took over, before it does anything else.
    if (this.leading && now - this.lastRenew > this.options.renewDeadlineMs) this.setLeading(false);
    try {
      const lease = await this.bounded(this.kube.readLease(namespace, name));
      if (!lease) {
        await this.bounded(
          this.kube.createLease(namespace, {
            apiVersion: "coordination.k8s.io/v1",
            kind: "Lease",
            metadata: { name, namespace },
            spec: this.leaseSpec(new Date(now), undefined),
          }),
        );
        this.renewed(now);
        return;
      }
      const holder = lease.spec?.holderIdentity ?? "";
      const record = `${holder}|${String(lease.spec?.renewTime ?? "")}|${lease.metadata?.resourceVersion ?? ""}`;
      if (record !== this.observedRecord) {
        this.observedRecord = record;
        this.observedAt = now;
      }
      const durationMs = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
      const expired = holder === "" || now - this.observedAt >= durationMs;
      if (holder !== identity && !expired) {
        this.setLeading(false);
        return;
      }
      await this.bounded(
        this.kube.replaceLease(namespace, name, { ...lease, spec: this.leaseSpec(new Date(now), lease) }),
      );
      this.renewed(now);
    } catch (error) {
      if (!isConflict(error)) this.log.warn("lease update failed", { error: describeError(error) });
      if (this.leading && Date.now() - this.lastRenew > this.options.renewDeadlineMs) this.setLeading(false);
    }
  }

  private renewed(now: number): void {
    this.lastRenew = now;
    this.setLeading(true);
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.bounded(this.kube.readLease(this.options.namespace, this.options.name));
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      await this.bounded(
        this.kube.replaceLease(this.options.namespace, this.options.name, {
          ...lease,
          spec: { ...lease.spec, holderIdentity: "", renewTime: new Date() },
        }),
      );
    } catch (error) {
      this.log.warn("could not release the lease", { error: describeError(error) });
    }
  }
}
