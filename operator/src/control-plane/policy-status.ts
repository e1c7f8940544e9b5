import type { KubernetesObject } from "@kubernetes/client-node";
import type { ResourceStatus } from "../api/operator-schemas.ts";
import { buildStatus, sameStatus } from "../controller/conditions.ts";
import type { Logger } from "../controller/log.ts";
import { describeError, type KubeClient } from "../kube/kube-client.ts";
import type { Resource } from "../render/resources.ts";
import { buildPolicyDocument } from "./policy-document.ts";

// An OrganizationPolicy's Accepted condition: whether the gateway's schema accepts it, and if not, why (the
// control-plane API then keeps serving the organization's last good policy). Written by the leader only, so
// replicas do not race; an unchanged status is not written again (its own watch event must not loop).

export function writePolicyStatus(
  object: KubernetesObject,
  options: { kube: KubeClient; log: Logger; isLeader: () => boolean },
): void {
  if (!options.isLeader()) return;
  const policy = object as Resource;
  const built = buildPolicyDocument(policy);
  const previous = policy.status as ResourceStatus | undefined;
  const status = buildStatus(previous, policy.metadata.generation, [
    built.ok
      ? {
          type: "Accepted",
          status: true,
          reason: "Accepted",
          message: `served to the gateways of organization ${String(built.value.body.organization_id)}`,
        }
      : {
          type: "Accepted",
          status: false,
          reason: "Invalid",
          message: `${built.problem}; gateways keep the organization's last valid policy`,
        },
  ]);
  if (sameStatus(previous, status)) return;
  const namespace = policy.metadata.namespace ?? "default";
  options.kube
    .patchStatus("OrganizationPolicy", namespace, policy.metadata.name, status)
    .catch((error: unknown) =>
      options.log.warn("OrganizationPolicy status not written", {
        organizationPolicy: `${namespace}/${policy.metadata.name}`,
        error: describeError(error),
      }),
    );
}
