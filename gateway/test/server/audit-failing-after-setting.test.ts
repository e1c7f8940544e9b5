// SVC_AUDIT_FAILING_AFTER_SECONDS: how long an audit sink fails every attempt before it is `failing` (UNHEALTHY).
// Default 5 minutes; a value that is not a number in range stops the start, naming the variable.
import { expect, test } from "vitest";
import { readSettings, SettingsError } from "../../src/server/settings.ts";

test("unset: 5 minutes; set: that many seconds", () => {
  expect(readSettings({}).auditFailingAfterMs).toBe(300_000);
  expect(readSettings({ SVC_AUDIT_FAILING_AFTER_SECONDS: "2.5" }).auditFailingAfterMs).toBe(2500);
});

test.each(["0", "-5", "86401", "soon"])("'%s' is refused, naming the variable and the range", (value) => {
  expect(() => readSettings({ SVC_AUDIT_FAILING_AFTER_SECONDS: value })).toThrow(SettingsError);
  expect(() => readSettings({ SVC_AUDIT_FAILING_AFTER_SECONDS: value })).toThrow(
    /SVC_AUDIT_FAILING_AFTER_SECONDS must be a number from 1 to 86400/,
  );
});
