// Each built-in recognizer on its own shapes and near-misses, context words, overlaps. The per-entity
// precision and recall over the labelled texts are in evaluation.test.ts.
import { describe, expect, test } from "vitest";
import { allRecognizers, compiled, found } from "./support/compile.ts";

const all = allRecognizers();

describe("recognizers", () => {
  test("EMAIL_ADDRESS: addresses with sub-domains, tags and dots; asset names and versions are not mail", () => {
    expect(found(all, "write to jane.roe+news@mail.example.co.uk, or j_roe@example.org.")).toEqual([
      ["EMAIL_ADDRESS", "jane.roe+news@mail.example.co.uk"],
      ["EMAIL_ADDRESS", "j_roe@example.org"],
    ]);
    expect(found(all, "logo@2x.png lodash@4.17.21 @scope/pkg user@localhost")).toEqual([]);
  });

  test("CREDIT_CARD: Luhn-valid numbers of a network's range and length, bare or grouped; others refused", () => {
    expect(found(all, "card 4111 1111 1111 1111, amex 3782-822463-10005, 5555555555554444")).toEqual([
      ["CREDIT_CARD", "4111 1111 1111 1111"],
      ["CREDIT_CARD", "3782-822463-10005"],
      ["CREDIT_CARD", "5555555555554444"],
    ]);
    // Luhn fails; a valid number inside a longer digit run or a word; epoch milliseconds.
    expect(found(all, "card 4111 1111 1111 1112")).toEqual([]);
    expect(found(all, "ref 4111 1111 1111 1111 2222 and X4111111111111111")).toEqual([]);
    expect(found(all, "at 1700000000000 ms")).toEqual([]);
  });

  test("US_SSN: area 000, 666 and 900-999, group 00, serial 0000 and the famous samples are refused", () => {
    expect(found(all, "SSN 536-22-8143")).toEqual([["US_SSN", "536-22-8143"]]);
    for (const invalid of [
      "000-12-3456",
      "666-12-3456",
      "900-12-3456",
      "536-00-8143",
      "536-22-0000",
      "078-05-1120",
    ]) {
      expect(found(all, `SSN ${invalid}`).filter(([entity]) => entity === "US_SSN")).toEqual([]);
    }
    // Nine bare digits are an SSN only with a context word.
    expect(found(all, "ssn: 536228143")).toEqual([["US_SSN", "536228143"]]);
    expect(found(all, "id 536228143")).toEqual([]);
  });

  test("US_ITIN: 9XX with the issued group ranges", () => {
    expect(found(all, "ITIN 912-70-1234")).toEqual([["US_ITIN", "912-70-1234"]]);
    expect(found(all, "ITIN 912-40-1234")).toEqual([]);
  });

  test("PHONE_NUMBER: numbers libphonenumber calls valid, written as people write them", () => {
    expect(found(all, "call (415) 555-2671 or +44 20 7946 0958 or +49 30 1234567 or 020 7946 0958")).toEqual([
      ["PHONE_NUMBER", "(415) 555-2671"],
      ["PHONE_NUMBER", "+44 20 7946 0958"],
      ["PHONE_NUMBER", "+49 30 1234567"],
      ["PHONE_NUMBER", "020 7946 0958"],
    ]);
    // A count, a year range, a bare run of digits without a context word.
    expect(found(all, "we shipped 1234567 units in 2019 - 2021, batch 4155552671")).toEqual([]);
    // A local number without trunk prefix needs a context word.
    expect(found(all, "Phone: 467 3395")).toEqual([["PHONE_NUMBER", "467 3395"]]);
    expect(found(all, "aisle 467 3395")).toEqual([]);
  });

  test("IP_ADDRESS: IPv4 and IPv6 forms; out-of-range octets, longer dotted runs and version strings are not", () => {
    expect(found(all, "from 203.0.113.7 and 2001:db8::8a2e:370:7334 and ::ffff:192.0.2.1")).toEqual([
      ["IP_ADDRESS", "203.0.113.7"],
      ["IP_ADDRESS", "2001:db8::8a2e:370:7334"],
      ["IP_ADDRESS", "::ffff:192.0.2.1"],
    ]);
    expect(found(all, "256.1.1.1 and 1.2.3.4.5 and 12:30:45 and 00:1A:2B:3C:4D:5E")).toEqual([]);
    expect(found(all, "upgraded to 1.2.3.4")).toEqual([]);
    expect(found(all, "ip 1.2.3.4")).toEqual([["IP_ADDRESS", "1.2.3.4"]]);
    expect(found(all, "version 10.20.30.40")).toEqual([]);
    // The only colon pair of a text may be the address itself, in its shortest or longest written form.
    expect(found(all, "Note: reach it at ::1, no digits elsewhere")).toEqual([["IP_ADDRESS", "::1"]]);
    expect(found(all, "host fe80:0000:0000:0000:0202:b3ff:fe1e:8329 at 10:30")).toEqual([
      ["IP_ADDRESS", "fe80:0000:0000:0000:0202:b3ff:fe1e:8329"],
    ]);
  });

  test("URL: scheme or www, closing punctuation left outside", () => {
    expect(
      found(
        all,
        "See https://example.com/a?b=1. Or (www.example.org/x), https://en.wikipedia.org/wiki/A_(b).",
      ),
    ).toEqual([
      ["URL", "https://example.com/a?b=1"],
      ["URL", "www.example.org/x"],
      ["URL", "https://en.wikipedia.org/wiki/A_(b)"],
    ]);
  });

  test("IBAN_CODE: mod 97 over the country's length, compact or grouped, never swallowing the next word", () => {
    expect(found(all, "IBAN GB82 WEST 1234 5698 7654 32 is mine, DE89370400440532013000 too")).toEqual([
      ["IBAN_CODE", "GB82 WEST 1234 5698 7654 32"],
      ["IBAN_CODE", "DE89370400440532013000"],
    ]);
    expect(found(all, "IBAN GB82 WEST 1234 5698 7654 33")).toEqual([]);
    // A valid IBAN followed by more characters of the same token is part of something longer.
    expect(found(all, "ref GB82WEST123456987654329")).toEqual([]);
  });

  test("CRYPTO: base58check and bech32 Bitcoin addresses with a valid checksum only", () => {
    expect(
      found(all, "to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2 or bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"),
    ).toEqual([
      ["CRYPTO", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"],
      ["CRYPTO", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"],
    ]);
    expect(found(all, "to 1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3")).toEqual([]);
  });

  test("UK_NHS: modulus 11; a context word decides against a phone number of the same shape", () => {
    expect(found(all, "NHS number 943 476 5919")).toEqual([["UK_NHS", "943 476 5919"]]);
    expect(found(all, "NHS number 943 476 5918")).toEqual([]);
  });

  test("MEDICAL_LICENSE: DEA numbers with a valid check digit", () => {
    expect(found(all, "DEA AB1234563")).toEqual([["MEDICAL_LICENSE", "AB1234563"]]);
    expect(found(all, "DEA AB1234564")).toEqual([]);
  });

  test("weak patterns need their context word: passport, driver license, bank account", () => {
    expect(found(all, "passport 912345678")).toEqual([["US_PASSPORT", "912345678"]]);
    expect(found(all, "driver license D1234567")).toEqual([["US_DRIVER_LICENSE", "D1234567"]]);
    expect(found(all, "checking account 000123456789")).toEqual([["US_BANK_NUMBER", "000123456789"]]);
    expect(found(all, "part D1234567 and 000123456789")).toEqual([]);
  });

  test("DATE_TIME: numeric, ISO and named dates; impossible dates are not", () => {
    expect(found(all, "on 12/31/2023, 2024-01-05T10:00:00Z and March 3, 2021")).toEqual([
      ["DATE_TIME", "12/31/2023"],
      ["DATE_TIME", "2024-01-05T10:00:00Z"],
      ["DATE_TIME", "March 3, 2021"],
    ]);
    expect(found(all, "13/45/2023 and 2024-13-40")).toEqual([]);
  });
});

describe("context and overlaps", () => {
  test("a field name is context: a bare nine-digit value under `ssn` is an SSN", () => {
    const scrubbing = compiled([{ enabled: true }]);
    expect(scrubbing.scrubValue({ ssn: "536228143", id: "536228143" }).value).toEqual({
      ssn: "<US_SSN>",
      id: "536228143",
    });
  });

  test("the nearest telling word decides: a near-miss word after a context word wins", () => {
    expect(found(all, "server 203.0.113.7 runs release 10.2.0.1")).toEqual([["IP_ADDRESS", "203.0.113.7"]]);
  });

  test("overlaps: the higher score keeps its span, the rest of a lower one is still replaced", () => {
    const text = "see https://example.com/u?mail=jane@example.org now";
    expect(found(all, text)).toEqual([
      ["URL", "https://example.com/u?mail="],
      ["EMAIL_ADDRESS", "jane@example.org"],
    ]);
    expect(all.scrubText(text).value).toBe("see <URL><EMAIL_ADDRESS> now");
    expect(all.scrubText(text).counts).toEqual({ URL: 1, EMAIL_ADDRESS: 1 });
  });

  test("findings are offsets in UTF-16 code units, as JavaScript strings index", () => {
    const text = "😀 é jane@example.org";
    const [finding] = all.scrubText(text).findings;
    expect(finding && text.slice(finding.start, finding.end)).toBe("jane@example.org");
    expect(finding?.start).toBe(5);
  });
});
