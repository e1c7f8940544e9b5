// The union of the organization, gateway and server layers (lowest precedence first).
import { describe, expect, test } from "vitest";
import { ENTITY_TYPES, OPT_IN_ENTITY_TYPES } from "../../src/pii/index.ts";
import { compiled } from "./support/compile.ts";

describe("merging layers", () => {
  test("scrubbing is on when any layer turns it on; a disabled layer still contributes its fields and rules", () => {
    const scrubbing = compiled([
      { enabled: true },
      {
        enabled: false,
        sensitive_fields: ["token"],
        custom_rules: [{ pattern: "EMP-[0-9]+", method: "remove" }],
      },
      { enabled: false },
    ]);
    expect(scrubbing.enabled).toBe(true);
    expect(scrubbing.scrubValue({ token: "t", note: "EMP-12 done" }).value).toEqual({
      token: "[MASKED]",
      note: " done",
    });
    expect(compiled([{ enabled: false }, { enabled: false }]).enabled).toBe(false);
  });

  test("sensitive and whitelisted fields are the union of all layers", () => {
    const scrubbing = compiled([
      { enabled: true, sensitive_fields: ["a"], whitelist_fields: ["w1"] },
      { sensitive_fields: ["b"] },
      { sensitive_fields: ["c"], whitelist_fields: ["w2"] },
    ]);
    const value = { a: 1, b: 2, c: 3, w1: "jane@example.org", w2: "bob@example.org", x: "eve@example.org" };
    expect(scrubbing.scrubValue(value).value).toEqual({
      a: "[MASKED]",
      b: "[MASKED]",
      c: "[MASKED]",
      w1: "jane@example.org",
      w2: "bob@example.org",
      x: "<EMAIL_ADDRESS>",
    });
  });

  test("custom rules of every layer apply, in layer order; a rule repeated verbatim is kept once", () => {
    const repeated = { pattern: "EMP-[0-9]+", method: "mask" };
    const scrubbing = compiled([
      { enabled: true, custom_rules: [repeated] },
      { custom_rules: [repeated, { pattern: "ACME-[0-9]+", method: "replace", replacement: "<ACME>" }] },
    ]);
    const result = scrubbing.scrubText("EMP-1 ACME-2");
    expect(result.value).toBe("[MASKED] <ACME>");
    expect(result.counts).toEqual({ "custom_rules[0]": 1, "custom_rules[1]": 1 });
  });

  test("with no recognizer listed, all run except the opt-in URL and DATE_TIME", () => {
    expect(OPT_IN_ENTITY_TYPES).toEqual(new Set(["URL", "DATE_TIME"]));
    expect(compiled([{ enabled: true }]).entityTypes).toEqual(
      ENTITY_TYPES.filter((entity) => entity !== "URL" && entity !== "DATE_TIME"),
    );
    expect(compiled([{ enabled: true }]).scrubText("see https://example.com on 12/31/2023").changed).toBe(
      false,
    );
  });

  test("listing a recognizer turns on an opt-in one or turns off a default one; enabled: true wins over false", () => {
    const layers = [
      {
        enabled: true,
        recognizers: [{ entity_type: "URL" }, { entity_type: "EMAIL_ADDRESS", enabled: false }],
      },
      {
        recognizers: [
          { entity_type: "URL", enabled: false },
          { entity_type: "IP_ADDRESS", enabled: false },
        ],
      },
    ];
    const types = compiled(layers).entityTypes;
    expect(types).toContain("URL");
    expect(types).not.toContain("EMAIL_ADDRESS");
    expect(types).not.toContain("IP_ADDRESS");
    // A later layer turning EMAIL_ADDRESS back on wins over the earlier false.
    expect(compiled([...layers, { recognizers: [{ entity_type: "EMAIL_ADDRESS" }] }]).entityTypes).toContain(
      "EMAIL_ADDRESS",
    );
  });

  test("replacement: the server's beats the gateway's, the gateway's the organization's", () => {
    const organization = {
      enabled: true,
      recognizers: [{ entity_type: "EMAIL_ADDRESS", replacement: "[ORG]" }],
    };
    const gateway = { recognizers: [{ entity_type: "EMAIL_ADDRESS", replacement: "[GATEWAY]" }] };
    const server = { recognizers: [{ entity_type: "EMAIL_ADDRESS", replacement: "[SERVER]" }] };
    const mail = "jane@example.org";
    expect(compiled([organization, gateway, server]).scrubText(mail).value).toBe("[SERVER]");
    expect(compiled([organization, gateway]).scrubText(mail).value).toBe("[GATEWAY]");
    // A higher layer that lists the recognizer without a replacement keeps the lower one's.
    expect(
      compiled([organization, { recognizers: [{ entity_type: "EMAIL_ADDRESS" }] }]).scrubText(mail).value,
    ).toBe("[ORG]");
    expect(compiled([{ enabled: true }]).scrubText(mail).value).toBe("<EMAIL_ADDRESS>");
  });
});
