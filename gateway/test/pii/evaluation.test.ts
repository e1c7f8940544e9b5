// Per-entity precision and recall over labelled texts (test/fixtures/pii/). The held-out synthetic split
// gates the structured and checksum-backed entities; the public presidio-research/Nannigalaxy file is
// measured separately and only reported: its labels follow other conventions (years as DATE_TIME, URLs
// unlabelled, hand-made card and IBAN values that fail their checksums). The generator is
// scripts/generate-pii-fixtures.ts; dev splits are what the recognizers were tuned on.
import { describe, expect, test } from "vitest";
import { ENTITY_TYPES } from "../../src/pii/index.ts";
import { allRecognizers } from "./support/compile.ts";
import {
  formatScores,
  readLabelledTexts,
  scoreEntities,
  splitPublicTexts,
  withEvasions,
} from "./support/labelled-texts.ts";

const GATED = [
  "EMAIL_ADDRESS",
  "CREDIT_CARD",
  "US_SSN",
  "PHONE_NUMBER",
  "IP_ADDRESS",
  "IBAN_CODE",
  "URL",
  "CRYPTO",
  "UK_NHS",
  "US_ITIN",
  "MEDICAL_LICENSE",
];
const MIN_PRECISION = 0.95;
const MIN_RECALL = 0.9;

const scrubbing = allRecognizers();

describe("precision and recall per entity", () => {
  const heldOut = scoreEntities(scrubbing, readLabelledTexts("synthetic-heldout.jsonl"), ENTITY_TYPES);
  console.info(formatScores("synthetic held-out split (every recognizer on):", heldOut.values()));

  test.each(GATED)(
    `%s on the held-out split: precision >= ${MIN_PRECISION}, recall >= ${MIN_RECALL}`,
    (entity) => {
      const score = heldOut.get(entity);
      expect(score?.labelled, `${entity} has labelled examples`).toBeGreaterThan(20);
      const detail = `missed: ${JSON.stringify(score?.missed)}; false alarms: ${JSON.stringify(score?.falseAlarms)}`;
      expect(score?.precision, detail).toBeGreaterThanOrEqual(MIN_PRECISION);
      expect(score?.recall, detail).toBeGreaterThanOrEqual(MIN_RECALL);
    },
  );

  const evasive = scoreEntities(
    scrubbing,
    withEvasions(readLabelledTexts("synthetic-heldout.jsonl")),
    ENTITY_TYPES,
  );
  console.info(formatScores("synthetic held-out split, values spelt evasively:", evasive.values()));

  test.each(GATED)(
    `%s spelt evasively (zero-width, soft hyphen, fullwidth, no-break space): precision >= ${MIN_PRECISION}, recall >= ${MIN_RECALL}`,
    (entity) => {
      const score = evasive.get(entity);
      const detail = `missed: ${JSON.stringify(score?.missed)}; false alarms: ${JSON.stringify(score?.falseAlarms)}`;
      expect(score?.precision, detail).toBeGreaterThanOrEqual(MIN_PRECISION);
      expect(score?.recall, detail).toBeGreaterThanOrEqual(MIN_RECALL);
    },
  );

  test("the public file, reported per split (not gated)", () => {
    const { dev, heldOut: publicHeldOut } = splitPublicTexts(readLabelledTexts("public-pii-train.jsonl"));
    expect(dev.length + publicHeldOut.length).toBe(763);
    console.info(
      formatScores("public file, dev split:", scoreEntities(scrubbing, dev, ENTITY_TYPES).values()),
    );
    console.info(
      formatScores(
        "public file, held-out split:",
        scoreEntities(scrubbing, publicHeldOut, ENTITY_TYPES).values(),
      ),
    );
  });
});
