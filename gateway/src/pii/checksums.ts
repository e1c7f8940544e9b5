import { createHash } from "node:crypto";

// The check-digit algorithms that turn a digit pattern into a confident finding. Each takes the bare
// characters (separators already removed) and answers whether the check passes.

/** Luhn (ISO/IEC 7812-1), the payment card check digit. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return false;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** ISO 13616 IBAN check: move the first four characters to the end, letters to 10..35, remainder mod 97 is 1. */
export function ibanMod97Valid(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    if (code >= 48 && code <= 57) remainder = (remainder * 10 + (code - 48)) % 97;
    else if (code >= 65 && code <= 90) remainder = (remainder * 100 + (code - 55)) % 97;
    else return false;
  }
  return remainder === 1;
}

/** NHS number modulus 11: weights 10..2 over the first nine digits; 11 - (sum mod 11) is the tenth (11 means 0). */
export function nhsValid(digits: string): boolean {
  if (!/^\d{10}$/.test(digits)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (digits.charCodeAt(i) - 48) * (10 - i);
  let check = 11 - (sum % 11);
  if (check === 11) check = 0;
  return check !== 10 && check === digits.charCodeAt(9) - 48;
}

/** DEA registration number: (d1 + d3 + d5) + 2 × (d2 + d4 + d6), its last digit is d7. */
export function deaValid(registration: string): boolean {
  const digits = registration.slice(2);
  if (!/^\d{7}$/.test(digits)) return false;
  const d = (i: number) => digits.charCodeAt(i) - 48;
  const sum = d(0) + d(2) + d(4) + 2 * (d(1) + d(3) + d(5));
  return sum % 10 === d(6);
}

const BASE58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Base58Check (legacy and P2SH Bitcoin addresses): 25 bytes, the last four the double SHA-256 of the rest. */
export function base58CheckValid(address: string): boolean {
  let value = 0n;
  for (const char of address) {
    const digit = BASE58_ALPHABET.indexOf(char);
    if (digit < 0) return false;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  for (const char of address) {
    if (char !== "1") break;
    bytes.unshift(0);
  }
  if (bytes.length !== 25) return false;
  const payload = Buffer.from(bytes.slice(0, 21));
  const checksum = createHash("sha256").update(createHash("sha256").update(payload).digest()).digest();
  return bytes.slice(21).every((byte, i) => byte === checksum[i]);
}

const BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
const BECH32_CONSTANT = 1;
const BECH32M_CONSTANT = 0x2bc830a3;

/** BIP-173 checksum polymod over the expanded human-readable part and the data, checksum included. */
export function bech32Polymod(values: readonly number[]): number {
  const generators = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let checksum = 1;
  for (const value of values) {
    const top = checksum >>> 25;
    checksum = ((checksum & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) checksum ^= generators[i] ?? 0;
  }
  return checksum >>> 0;
}

/**
 * A Bitcoin segwit address (BIP-173 bech32 for version 0, BIP-350 bech32m for later versions) with human
 * readable part `bc`: checksum, and a witness program of a length its version allows.
 */
export function bech32AddressValid(address: string): boolean {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) return false;
  const lower = address.toLowerCase();
  if (!lower.startsWith("bc1") || lower.length < 14 || lower.length > 90) return false;
  const data: number[] = [];
  for (const char of lower.slice(3)) {
    const value = BECH32_CHARSET.indexOf(char);
    if (value < 0) return false;
    data.push(value);
  }
  const hrp = [3, 3, 0, 2, 3]; // "bc" expanded: high bits (3, 3), a zero, low bits (2, 3)
  const version = data[0] ?? -1;
  const polymod = bech32Polymod([...hrp, ...data]);
  if (polymod !== (version === 0 ? BECH32_CONSTANT : BECH32M_CONSTANT)) return false;
  if (version < 0 || version > 16) return false;
  const programBits = (data.length - 7) * 5; // less the version and the six checksum characters
  const programBytes = Math.floor(programBits / 8);
  if (programBits - programBytes * 8 > 4) return false;
  if (version === 0) return programBytes === 20 || programBytes === 32;
  return programBytes >= 2 && programBytes <= 40;
}
