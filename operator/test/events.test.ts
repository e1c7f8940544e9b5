import { describe, expect, it } from "vitest";
import type { ResourceStatus } from "../src/api/operator-schemas.ts";
import { conditionEvents } from "../src/controller/events.ts";

const status = (...conditions: [string, string, string][]): ResourceStatus =>
  ({
    conditions: conditions.map(([type, value, reason]) => ({
      type,
      status: value,
      reason,
      message: `${type} is ${value}`,
      lastTransitionTime: "2026-01-01T00:00:00Z",
    })),
  }) as ResourceStatus;

describe("condition events", () => {
  it("records a Warning for a condition that turned False, a Normal for one that turned True", () => {
    const before = status(["Accepted", "True", "Accepted"], ["Ready", "False", "Unavailable"]);
    const after = status(["Accepted", "False", "Invalid"], ["Ready", "True", "Ready"]);
    expect(conditionEvents(before, after)).toEqual([
      { type: "Warning", reason: "Invalid", message: "Accepted=False: Accepted is False" },
      { type: "Normal", reason: "Ready", message: "Ready=True: Ready is True" },
    ]);
  });

  it("records nothing when no condition's status or reason changed, so a stuck resource does not flood events", () => {
    const same = status(["Accepted", "False", "Invalid"]);
    expect(conditionEvents(same, structuredClone(same))).toEqual([]);
    // A new reason with the same status is news.
    expect(conditionEvents(same, status(["Accepted", "False", "GatewayInvalid"]))).toHaveLength(1);
  });

  it("keeps an event's message short", () => {
    const long = status(["Accepted", "False", "Invalid"]);
    (long.conditions?.[0] as { message: string }).message = "x".repeat(5000);
    const [event] = conditionEvents(undefined, long);
    expect(event?.message.length).toBe(1024);
  });
});
