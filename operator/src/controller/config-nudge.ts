import { createHash } from "node:crypto";
import type { KubeClient } from "../kube/kube-client.ts";
import type { Logger } from "./log.ts";

// The kubelet refreshes a mounted ConfigMap on its own schedule (its sync period plus its cache: a minute or two),
// so a change to an McpServer would reach the gateway that late. But the kubelet also re-syncs a pod, and with it
// remounts the pod's ConfigMap volumes from its up-to-date watch cache, whenever the pod object changes. So after
// writing a new configuration the operator sets an annotation carrying the configuration's hash on each pod of the
// gateway Deployment: the new file is in the pods within seconds and the gateway reloads it. Best effort: without
// the RBAC to list and patch pods the kubelet's own refresh still comes, later, and that is logged once.

export const CONFIG_HASH_ANNOTATION = "mcp.svc.dev/config-hash";

export function configHash(data: Record<string, string>): string {
  return createHash("sha256").update(JSON.stringify(data)).digest("hex").slice(0, 16);
}

export class ConfigNudge {
  /** The hash last announced per gateway Deployment (namespace/name), so an unchanged ConfigMap sends nothing. */
  readonly #announced = new Map<string, string>();
  #warned = false;
  readonly #kube: KubeClient;
  readonly #log: Logger;

  constructor(kube: KubeClient, log: Logger) {
    this.#kube = kube;
    this.#log = log;
  }

  async nudge(
    deployment: { metadata?: { namespace?: string; name?: string }; spec?: unknown } | undefined,
    hash: string,
  ): Promise<void> {
    const namespace = deployment?.metadata?.namespace;
    const name = deployment?.metadata?.name;
    const matchLabels = (
      deployment?.spec as { selector?: { matchLabels?: Record<string, string> } } | undefined
    )?.selector?.matchLabels;
    if (!namespace || !name || !matchLabels || Object.keys(matchLabels).length === 0) return;
    const key = `${namespace}/${name}`;
    if (this.#announced.get(key) === hash) return;
    try {
      const pods = await this.#kube.listPodNames(namespace, matchLabels);
      await Promise.all(
        pods.map((pod) => this.#kube.annotatePod(namespace, pod, { [CONFIG_HASH_ANNOTATION]: hash })),
      );
      this.#announced.set(key, hash);
      this.#log.info("gateway pods told of the new configuration", {
        deployment: key,
        pods: pods.length,
        hash,
      });
    } catch (error) {
      if (!this.#warned) {
        this.#warned = true;
        this.#log.warn(
          "could not annotate the gateway pods; they pick up configuration changes at the kubelet's pace",
          {
            deployment: key,
            error: (error as Error).message,
          },
        );
      }
    }
  }
}
