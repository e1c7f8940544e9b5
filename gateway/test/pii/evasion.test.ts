// Ordinary spellings that hide personal data from a naive scan: each is read through the shared detection
// normalisation (src/text/normalize.ts), and the replacement covers every original character of the value, invisible
// ones included, so no prefix or suffix of it leaks.
import { describe, expect, test } from "vitest";
import { compiled } from "./support/compile.ts";

const scrubbing = compiled([{ enabled: true, custom_rules: [{ pattern: "ACCT-[0-9]{6}", method: "mask" }] }]);
const tags = (ascii: string) =>
  [...ascii].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");

describe("evasion spellings are scrubbed whole", () => {
  test.each([
    ["zero-width space inside an address", "mail ali\u200Bce@example.com now", "mail <EMAIL_ADDRESS> now"],
    ["soft hyphen inside an address", "mail al\u00ADice@exam\u00ADple.com now", "mail <EMAIL_ADDRESS> now"],
    ["fullwidth at sign", "mail alice\uFF20example.com now", "mail <EMAIL_ADDRESS> now"],
    ["ideographic full stop in the domain", "mail alice@example\u3002com now", "mail <EMAIL_ADDRESS> now"],
    ["homoglyph letters", "mail \u0430lic\u0435@\u0435xample.com now", "mail <EMAIL_ADDRESS> now"],
    ["tag-character smuggling", `note ${tags("alice@example.com")} end`, "note <EMAIL_ADDRESS> end"],
    ["fullwidth digits in a card", "card \uFF14\uFF11\uFF11\uFF11 1111 1111 1111", "card <CREDIT_CARD>"],
    ["a card with dots", "card 4111.1111.1111.1111 ok", "card <CREDIT_CARD> ok"],
    ["a card with mixed separators", "card 4111 1111-1111.1111 ok", "card <CREDIT_CARD> ok"],
    [
      "no-break spaces in a phone number",
      "call +1\u00A0212\u00A0555\u00A00143 now",
      "call <PHONE_NUMBER> now",
    ],
    ["en dashes in an SSN", "SSN 536\u201322\u20135124", "SSN <US_SSN>"],
    [
      "an address that reads like a version",
      "resolver 8.8.8.8 and 1.1.1.1",
      "resolver <IP_ADDRESS> and <IP_ADDRESS>",
    ],
    ["a custom rule over fullwidth digits", "ACCT-\uFF11\uFF12\uFF13\uFF14\uFF15\uFF16", "[MASKED]"],
  ])("%s", (_what, input, expected) => {
    expect(scrubbing.scrubText(input).value).toBe(expected);
  });

  test("findings name original offsets: the span holds the invisible characters inside the value", () => {
    const text = "to: ali\u200Bce@exa\u00ADmple.com.";
    const { findings, value } = scrubbing.scrubText(text);
    expect(findings).toHaveLength(1);
    const [finding] = findings;
    expect(text.slice(finding?.start, finding?.end)).toBe("ali\u200Bce@exa\u00ADmple.com");
    expect(value).toBe("to: <EMAIL_ADDRESS>.");
  });

  test("version strings stay versions when something says so", () => {
    for (const text of ["Upgraded from 5.4.6.5 to 1.6.9.7", "release 1.2.3.4", "version 2.0.1.5"]) {
      expect(scrubbing.scrubText(text).value).toBe(text);
    }
  });

  test("JSON numbers are scanned as their decimal text, in arguments as in results", () => {
    expect(scrubbing.scrubValue({ card: 4111111111111111, ssn: 536225124 }).value).toEqual({
      card: "<CREDIT_CARD>",
      ssn: "<US_SSN>",
    });
  });
});
