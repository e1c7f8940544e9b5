import { deaValid } from "../checksums.ts";
import { patternRecognizer } from "../recognizer.ts";

// DEA registration numbers (the US prescriber licence Presidio calls MEDICAL_LICENSE): a registrant-type
// letter, the first letter of the registrant's surname (or 9), seven digits whose last is a check digit.
const DEA = /(?<![\w-])[ABCDEFGHJKLMPRSTUXabcdefghjklmprstux][A-Za-z9]\d{7}(?![\w-])/g;

export const medicalLicenseRecognizer = patternRecognizer({
  entity: "MEDICAL_LICENSE",
  needsDigit: true,
  patterns: [{ regex: DEA, score: 0.4 }],
  // One random number in ten passes the DEA check: a valid one scores medium, and context settles it.
  validate: (match) => (deaValid(match) ? 0.6 : null),
  context: ["medical", "certificate", "dea", "license", "licence", "prescriber", "registration"],
});
