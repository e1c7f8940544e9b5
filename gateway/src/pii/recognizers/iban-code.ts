import { ibanMod97Valid } from "../checksums.ts";
import type { Recognizer } from "../recognizer.ts";

// International Bank Account Numbers: country code, two check digits, then the country's fixed-length BBAN,
// written compact or in groups of four. A loose pattern proposes a run; the run is cut at the length the
// country prescribes (so a following word is never swallowed) and kept only if ISO 7064 mod 97 passes.

// Registered IBAN lengths by country (the SWIFT IBAN registry).
const IBAN_LENGTHS: ReadonlyMap<string, number> = new Map(
  [
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 DJ27 DK18",
    "DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 HU28 IE22 IL23 IQ23",
    "IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MK19 MN20 MR27 MT31",
    "MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24",
    "SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30",
  ]
    .join(" ")
    .split(" ")
    .map((entry) => [entry.slice(0, 2), Number(entry.slice(2))] as const),
);
const CANDIDATE = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,34}/g;

function isAlphanumeric(char: string): boolean {
  return char !== "" && /[A-Za-z0-9]/.test(char);
}

export const ibanCodeRecognizer: Recognizer = {
  entity: "IBAN_CODE",
  context: ["iban", "bank", "transaction", "account", "transfer", "wire", "sepa"],
  negativeContext: [],
  needsDigit: true,
  find(text, emit) {
    CANDIDATE.lastIndex = 0;
    for (let match = CANDIDATE.exec(text); match !== null; match = CANDIDATE.exec(text)) {
      const run = match[0];
      const length = IBAN_LENGTHS.get(run.slice(0, 2).toUpperCase());
      if (length === undefined) continue;
      // Walk the run until `length` letters and digits are taken; the IBAN must end there, not mid-word.
      let taken = 0;
      let end = 0;
      let compactIban = "";
      while (end < run.length && taken < length) {
        const char = run.charAt(end);
        if (isAlphanumeric(char)) {
          compactIban += char.toUpperCase();
          taken++;
        }
        end++;
      }
      if (taken < length || isAlphanumeric(text.charAt(match.index + end))) continue;
      if (!ibanMod97Valid(compactIban)) continue;
      emit({ start: match.index, end: match.index + end, score: 1 });
      // Resume after the IBAN: the rest of the run may hold the next one.
      CANDIDATE.lastIndex = match.index + end;
    }
  },
};
