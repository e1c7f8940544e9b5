import { randomBytes } from "node:crypto";
import { FIELD_MANAGER, GROUP_VERSION, type Kind } from "../api/names.ts";
import type { ResourceStatus } from "../api/operator-schemas.ts";
import type { KubeObject, Resource } from "../render/resources.ts";

// Kubernetes Events for condition transitions, so `kubectl describe` (and `kubectl get events`) tells why a
// resource is not Ready without reading its YAML. One event per condition whose status or reason changed:
// Normal when it became True, Warning otherwise. A reconcile that changes nothing writes no event, so a
// resource stuck in one state does not flood the event store.

/** Events keep short notes; a longer message is cut (the full one stays in the condition). */
const EVENT_MESSAGE_MAX = 1024;

export interface ConditionEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}

export function conditionEvents(
  previous: ResourceStatus | undefined,
  next: ResourceStatus,
): ConditionEvent[] {
  return (next.conditions ?? []).flatMap((condition) => {
    const before = previous?.conditions?.find((candidate) => candidate.type === condition.type);
    if (before && before.status === condition.status && before.reason === condition.reason) return [];
    const text = `${condition.type}=${condition.status}: ${condition.message}`;
    return [
      {
        type: condition.status === "True" ? "Normal" : "Warning",
        reason: condition.reason,
        message: text.length <= EVENT_MESSAGE_MAX ? text : `${text.slice(0, EVENT_MESSAGE_MAX - 1)}…`,
      },
    ];
  });
}

/** A core/v1 Event about `resource`, as `kubectl describe` finds them (by involvedObject). */
export function eventObject(kind: Kind, resource: Resource, event: ConditionEvent, now: Date): KubeObject {
  const namespace = resource.metadata.namespace ?? "default";
  const timestamp = now.toISOString();
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: {
      // Like client-go's recorder: the object's name and a unique suffix.
      name: `${resource.metadata.name}.${now.getTime().toString(16)}${randomBytes(4).toString("hex")}`,
      namespace,
    },
    involvedObject: {
      apiVersion: GROUP_VERSION,
      kind,
      name: resource.metadata.name,
      namespace,
      ...(resource.metadata.uid === undefined ? {} : { uid: resource.metadata.uid }),
    },
    type: event.type,
    reason: event.reason,
    message: event.message,
    source: { component: FIELD_MANAGER },
    reportingComponent: FIELD_MANAGER,
    firstTimestamp: timestamp,
    lastTimestamp: timestamp,
    count: 1,
  };
}
