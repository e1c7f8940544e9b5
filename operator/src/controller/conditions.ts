import { CONDITION_MESSAGE_MAX, type Condition, type ResourceStatus } from "../api/operator-schemas.ts";

// Status with conditions Accepted / Programmed / Ready, each with a reason and a message (the Gateway API
// convention). lastTransitionTime only moves when a condition's status changes.

/** A message past the CRD's bound would make the API server refuse the whole status: cut it instead. */
function boundedMessage(message: string): string {
  if (message.length <= CONDITION_MESSAGE_MAX) return message;
  const marker = " … (cut)";
  return message.slice(0, CONDITION_MESSAGE_MAX - marker.length) + marker;
}

export type ConditionInput = Pick<Condition, "type" | "reason" | "message"> & { status: boolean | "Unknown" };

export function buildStatus(
  previous: ResourceStatus | undefined,
  generation: number | undefined,
  conditions: ConditionInput[],
  extra: Omit<ResourceStatus, "conditions" | "observedGeneration"> = {},
  now: Date = new Date(),
): ResourceStatus {
  const built: Condition[] = conditions.map((input) => {
    const status = input.status === "Unknown" ? "Unknown" : input.status ? "True" : "False";
    const before = previous?.conditions?.find((condition) => condition.type === input.type);
    return {
      type: input.type,
      status,
      reason: input.reason,
      message: boundedMessage(input.message),
      lastTransitionTime: before && before.status === status ? before.lastTransitionTime : now.toISOString(),
      ...(generation === undefined ? {} : { observedGeneration: generation }),
    };
  });
  return {
    ...(generation === undefined ? {} : { observedGeneration: generation }),
    conditions: built,
    ...extra,
  };
}

/**
 * Equal apart from timestamps: no write needed (and no watch event to wake ourselves up again). An McpGateway's
 * `controlPlane` (what its gateway reports through the control-plane API) is not the reconcile's to write or compare.
 */
export function sameStatus(a: ResourceStatus | undefined, b: ResourceStatus): boolean {
  const strip = (status: ResourceStatus | undefined) =>
    JSON.stringify({
      ...status,
      controlPlane: undefined,
      conditions: (status?.conditions ?? []).map(({ lastTransitionTime: _t, ...rest }) => rest),
    });
  return strip(a) === strip(b);
}
