import { base58CheckValid, bech32AddressValid } from "../checksums.ts";
import { patternRecognizer } from "../recognizer.ts";

// Bitcoin addresses: legacy and P2SH (base58check, starting 1 or 3) and segwit (bech32/bech32m, starting
// bc1). Only addresses whose checksum verifies are findings.
const ADDRESS =
  /(?<![\w])(?:[bB][cC]1[02-9ac-hj-np-zAC-HJ-NP-Z]{11,87}|[13][1-9A-HJ-NP-Za-km-z]{25,34})(?![\w])/g;

function validate(match: string): number | null {
  const valid = /^bc1/i.test(match) ? bech32AddressValid(match) : base58CheckValid(match);
  return valid ? 1 : null;
}

export const cryptoRecognizer = patternRecognizer({
  entity: "CRYPTO",
  needsDigit: true,
  patterns: [{ regex: ADDRESS, score: 0.5 }],
  validate,
  context: ["wallet", "btc", "bitcoin", "crypto", "address", "send", "pay"],
});
