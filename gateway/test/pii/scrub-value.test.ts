// scrubValue on JSON values: sensitive fields, whitelisted fields, strings and keys, JSON held in text.
import { describe, expect, test } from "vitest";
import { MASK_TEXT } from "../../src/pii/index.ts";
import { compiled } from "./support/compile.ts";

const scrubbing = compiled([
  { enabled: true, sensitive_fields: ["Password", "api_key"], whitelist_fields: ["commit"] },
]);

describe("scrubValue", () => {
  test("a sensitive field is masked at any depth, whatever its case and its value's type", () => {
    const value = {
      user: { PASSWORD: "hunter2", profile: [{ password: { old: "a", new: "b" } }, { Api_Key: 12345 }] },
      password: null,
    };
    const result = scrubbing.scrubValue(value);
    expect(result.value).toEqual({
      user: { PASSWORD: MASK_TEXT, profile: [{ password: MASK_TEXT }, { Api_Key: MASK_TEXT }] },
      password: MASK_TEXT,
    });
    expect(result.counts).toEqual({ SENSITIVE_FIELD: 4 });
    expect(result.changed).toBe(true);
  });

  test("below a whitelisted field nothing is scanned, but a sensitive field is still masked", () => {
    const value = {
      COMMIT: { author: "jane@example.org", nested: { password: "x", note: "call +44 20 7946 0958" } },
    };
    expect(scrubbing.scrubValue(value).value).toEqual({
      COMMIT: { author: "jane@example.org", nested: { password: MASK_TEXT, note: "call +44 20 7946 0958" } },
    });
  });

  test("other strings are scrubbed, booleans and ordinary numbers left alone", () => {
    const value = { to: ["jane@example.org", "ok"], count: 4111111111111112, ok: true, none: null, n: 42.5 };
    expect(scrubbing.scrubValue(value).value).toEqual({
      to: ["<EMAIL_ADDRESS>", "ok"],
      count: 4111111111111112,
      ok: true,
      none: null,
      n: 42.5,
    });
  });

  test("card, SSN and phone numbers sent as JSON numbers are scanned as their decimal text", () => {
    const value = { card: 4111111111111111, ssn: 536225124, phone: 2125550143, page: 3, total: 123456 };
    const result = scrubbing.scrubValue(value);
    expect(result.value).toEqual({
      card: "<CREDIT_CARD>",
      ssn: "<US_SSN>",
      phone: "<PHONE_NUMBER>",
      page: 3,
      total: 123456,
    });
    expect(result.counts).toEqual({ CREDIT_CARD: 1, US_SSN: 1, PHONE_NUMBER: 1 });
  });

  test("nothing to scrub: the very same object comes back, unchanged", () => {
    const value = { a: [1, "two", { three: "four" }], b: "plain text" };
    const result = scrubbing.scrubValue(value);
    expect(result.value).toBe(value);
    expect(result.changed).toBe(false);
    expect(result.counts).toEqual({});
  });

  test("the input is never modified: changed parts are copies", () => {
    const value = { keep: { a: 1 }, mail: "jane@example.org" };
    const result = scrubbing.scrubValue(value);
    expect(value.mail).toBe("jane@example.org");
    expect((result.value as typeof value).keep).toBe(value.keep);
  });

  test("field names are scrubbed too, and a `__proto__` key stays a plain key", () => {
    const value = JSON.parse('{"jane@example.org": 3, "__proto__": {"mail": "bob@example.org"}}');
    const result = scrubbing.scrubValue(value).value as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(["<EMAIL_ADDRESS>", "__proto__"]);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(result, "__proto__")?.value).toEqual({ mail: "<EMAIL_ADDRESS>" });
  });

  test("JSON held in a string (a tool result's text content) is scrubbed as JSON, fields included", () => {
    const result = {
      content: [
        {
          type: "text",
          text: JSON.stringify({ password: "s3cret", email: "jane@example.org", n: 1 }, null, 2),
        },
      ],
    };
    const scrubbed = scrubbing.scrubValue(result).value as typeof result;
    expect(JSON.parse(scrubbed.content[0]?.text ?? "")).toEqual({
      password: MASK_TEXT,
      email: "<EMAIL_ADDRESS>",
      n: 1,
    });
    // Re-serialised in the original's style: it had line breaks.
    expect(scrubbed.content[0]?.text).toContain('\n  "password": "[MASKED]"');
    // Text that only starts like JSON is scanned as text.
    expect(scrubbing.scrubValue("[1] see jane@example.org").value).toBe("[1] see <EMAIL_ADDRESS>");
  });

  test("scrubbing off: both methods return their input untouched", () => {
    const off = compiled([{ enabled: false, sensitive_fields: ["password"] }]);
    const value = { password: "x", mail: "jane@example.org" };
    expect(off.enabled).toBe(false);
    expect(off.scrubValue(value)).toEqual({ value, changed: false, counts: {}, findings: [] });
    expect(off.scrubValue(value).value).toBe(value);
    expect(off.scrubText("jane@example.org").value).toBe("jane@example.org");
  });
});
