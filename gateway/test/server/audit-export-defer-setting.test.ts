// SVC_AUDIT_EXPORT_DEFER_SECONDS: how long exports may wait in their spools while the gateway is busy. Default 10 s;
// 0 turns the wait off; a value that is not a number in range stops the start, naming the variable.
import { expect, test } from "vitest";
import { readSettings, SettingsError } from "../../src/server/settings.ts";

test("unset: 10 s; set: that many seconds, 0 included", () => {
  expect(readSettings({}).auditExportDeferMs).toBe(10_000);
  expect(readSettings({ SVC_AUDIT_EXPORT_DEFER_SECONDS: "2.5" }).auditExportDeferMs).toBe(2500);
  expect(readSettings({ SVC_AUDIT_EXPORT_DEFER_SECONDS: "0" }).auditExportDeferMs).toBe(0);
});

test.each(["-1", "301", "later"])("'%s' is refused, naming the variable and the range", (value) => {
  expect(() => readSettings({ SVC_AUDIT_EXPORT_DEFER_SECONDS: value })).toThrow(SettingsError);
  expect(() => readSettings({ SVC_AUDIT_EXPORT_DEFER_SECONDS: value })).toThrow(
    /SVC_AUDIT_EXPORT_DEFER_SECONDS must be a number from 0 to 300/,
  );
});
