// Where a new configuration comes from: the file (a watch event, SIGHUP) or a control plane (a new organization
// policy, or in centralized mode a whole configuration). Every source hands its update to the one ConfigReloader,
// which validates, builds and swaps the snapshot the same way for all of them: requests in flight finish on the
// snapshot they started with, and an update that does not validate is refused while the last good one serves.
import type { PolicyDocument } from "../config/organization-policy.ts";

export type ConfigUpdate =
  /** The file may have changed: reload it if its content did (`force`: even if not). */
  | { kind: "file"; force: boolean }
  /** A validated organization policy from the control plane. */
  | { kind: "policy"; document: PolicyDocument }
  /** The whole configuration from the control plane (centralized mode), YAML text not yet validated. */
  | { kind: "configuration"; text: string };

/** Resolves true when the update is serving, false when it was refused or changed nothing. */
export type ApplyUpdate = (update: ConfigUpdate) => Promise<boolean>;

export interface ConfigSource {
  /** Starts telling `apply` about updates. */
  start(apply: ApplyUpdate): void;
  close(): void;
}
