import { patternRecognizer } from "../recognizer.ts";

// Individual Taxpayer Identification Numbers: 9XX-GG-NNNN where the group is 50-65, 70-88, 90-92 or 94-99.
// Separated by dashes or spaces: medium; bare nine digits: very weak (needs context).
const GROUP = "(?:5\\d|6[0-5]|7\\d|8[0-8]|9[0-24-9])";
const SEPARATED = new RegExp(`(?<![\\w-])9\\d{2}([- ])${GROUP}\\1\\d{4}(?![\\w-])`, "g");
const BARE = new RegExp(`(?<![\\w-])9\\d{2}${GROUP}\\d{4}(?![\\w-])`, "g");

export const usItinRecognizer = patternRecognizer({
  entity: "US_ITIN",
  needsDigit: true,
  patterns: [
    { regex: SEPARATED, score: 0.5 },
    { regex: BARE, score: 0.05 },
  ],
  context: ["individual", "taxpayer", "itin", "tax", "payer", "taxid", "tin"],
});
