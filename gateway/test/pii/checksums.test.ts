// The check-digit algorithms against published vectors: the generator of the labelled texts uses the same
// functions, so these vectors are what ties them to the real schemes.
import { describe, expect, test } from "vitest";
import {
  base58CheckValid,
  bech32AddressValid,
  deaValid,
  ibanMod97Valid,
  luhnValid,
  nhsValid,
} from "../../src/pii/checksums.ts";

describe("check digits", () => {
  test("Luhn: the networks' test card numbers pass, one changed digit fails", () => {
    for (const card of ["4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"]) {
      expect(luhnValid(card)).toBe(true);
    }
    expect(luhnValid("4111111111111112")).toBe(false);
    expect(luhnValid("")).toBe(false);
  });

  test("IBAN mod 97 (ISO 13616 examples)", () => {
    expect(ibanMod97Valid("GB82WEST12345698765432")).toBe(true);
    expect(ibanMod97Valid("DE89370400440532013000")).toBe(true);
    expect(ibanMod97Valid("GB82WEST12345698765433")).toBe(false);
    expect(ibanMod97Valid("GB28WEST12345698765432")).toBe(false);
  });

  test("NHS modulus 11 (the NHS Data Dictionary example 943 476 5919)", () => {
    expect(nhsValid("9434765919")).toBe(true);
    expect(nhsValid("9434765918")).toBe(false);
    // Check digit 10 is never issued.
    expect(nhsValid("1000000010")).toBe(false);
  });

  test("DEA registration check digit", () => {
    expect(deaValid("AB1234563")).toBe(true);
    expect(deaValid("AB1234564")).toBe(false);
  });

  test("Base58Check: Bitcoin P2PKH and P2SH addresses", () => {
    expect(base58CheckValid("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")).toBe(true);
    expect(base58CheckValid("3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy")).toBe(true);
    expect(base58CheckValid("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3")).toBe(false);
    expect(base58CheckValid("1BvBMSEYstWetqTFn5Au4m4GFg7xJaNV0")).toBe(false); // 0 is not base58
  });

  test("bech32 (BIP-173) and bech32m (BIP-350) segwit addresses", () => {
    expect(bech32AddressValid("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4")).toBe(true);
    expect(bech32AddressValid("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq")).toBe(true);
    expect(bech32AddressValid("bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0")).toBe(true);
    // BIP-350 invalid vectors: a version 1+ program with a bech32 checksum, a version 0 with bech32m.
    expect(bech32AddressValid("bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd")).toBe(false);
    expect(bech32AddressValid("BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL")).toBe(false);
    // Mixed case is refused.
    expect(bech32AddressValid("bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mDQ")).toBe(false);
  });
});
