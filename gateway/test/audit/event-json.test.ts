import { expect, test } from "vitest";
import { completeEvent } from "../../src/audit/audit-event.ts";
import { eventJson, parsedEvent } from "../../src/audit/event-json.ts";
import { HashChain } from "../../src/audit/hash-chain.ts";

test("an event parsed from its line keeps that line as its JSON (the spool and the export thread send it as read)", () => {
  const linked = new HashChain("gw-1").link(
    completeEvent({ kind: "call_completed", reason: "é \u2028" }, "gw"),
  );
  const line = eventJson(linked);
  const parsed = parsedEvent(line);
  expect(parsed).toEqual(linked);
  expect(eventJson(parsed)).toBe(line);
  // Text as read, not made again: a line with other spacing is kept as it is.
  const spaced = line.replace(/,"/g, ', "');
  expect(eventJson(parsedEvent(spaced))).toBe(spaced);
});
