import { readFileSync } from "node:fs";
import type { CompiledScrubbing } from "../../../src/pii/index.ts";

// The labelled PII texts of test/fixtures/pii/ and per-entity precision and recall over them. A predicted
// span that overlaps a labelled span of the same entity counts as found (the shared data's own rule).

export interface LabelledSpan {
  start: number;
  end: number;
  entity: string;
}

export interface LabelledText {
  text: string;
  spans: LabelledSpan[];
  source?: string;
  template_id?: number;
}

const FIXTURES = new URL("../../fixtures/pii/", import.meta.url);

/** A JSON Lines fixture, without its provenance line. */
export function readLabelledTexts(file: string): LabelledText[] {
  return readFileSync(new URL(file, FIXTURES), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as LabelledText & { provenance?: string })
    .filter((row) => row.provenance === undefined);
}

/**
 * The public file split in two, as its provenance line says: presidio-research rows by template (even
 * template_id: dev), Nannigalaxy rows alternately. Tuning looks only at dev.
 */
export function splitPublicTexts(rows: readonly LabelledText[]): {
  dev: LabelledText[];
  heldOut: LabelledText[];
} {
  const dev: LabelledText[] = [];
  const heldOut: LabelledText[] = [];
  let otherIndex = 0;
  for (const row of rows) {
    const isDev = row.template_id !== undefined ? row.template_id % 2 === 0 : otherIndex++ % 2 === 0;
    (isDev ? dev : heldOut).push(row);
  }
  return { dev, heldOut };
}

export interface EntityScore {
  entity: string;
  predicted: number;
  correctPredictions: number;
  labelled: number;
  found: number;
  precision: number;
  recall: number;
  /** A few misses and false alarms, for reading. */
  missed: string[];
  falseAlarms: string[];
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) =>
  a.start < b.end && b.start < a.end;

export function scoreEntities(
  compiled: CompiledScrubbing,
  rows: readonly LabelledText[],
  entities: readonly string[],
): Map<string, EntityScore> {
  const scores = new Map<string, EntityScore>(
    entities.map((entity) => [
      entity,
      {
        entity,
        predicted: 0,
        correctPredictions: 0,
        labelled: 0,
        found: 0,
        precision: 1,
        recall: 1,
        missed: [],
        falseAlarms: [],
      },
    ]),
  );
  for (const row of rows) {
    const findings = compiled.scrubText(row.text).findings;
    for (const score of scores.values()) {
      const labels = row.spans.filter((span) => span.entity === score.entity);
      const predictions = findings.filter((finding) => finding.entity === score.entity);
      score.labelled += labels.length;
      score.predicted += predictions.length;
      for (const label of labels) {
        if (predictions.some((prediction) => overlaps(prediction, label))) score.found++;
        else if (score.missed.length < 8)
          score.missed.push(`${row.text.slice(label.start, label.end)} | ${row.text}`);
      }
      for (const prediction of predictions) {
        if (labels.some((label) => overlaps(prediction, label))) score.correctPredictions++;
        else if (score.falseAlarms.length < 8) {
          score.falseAlarms.push(`${row.text.slice(prediction.start, prediction.end)} | ${row.text}`);
        }
      }
    }
  }
  for (const score of scores.values()) {
    score.precision = score.predicted === 0 ? 1 : score.correctPredictions / score.predicted;
    score.recall = score.labelled === 0 ? 1 : score.found / score.labelled;
  }
  return scores;
}

/** One line per entity: `EMAIL_ADDRESS  P 1.000 (48/48)  R 1.000 (48/48)`. */
export function formatScores(title: string, scores: Iterable<EntityScore>): string {
  const lines = [title];
  for (const s of scores) {
    lines.push(
      `  ${s.entity.padEnd(18)} P ${s.precision.toFixed(3)} (${s.correctPredictions}/${s.predicted})  R ${s.recall.toFixed(3)} (${s.found}/${s.labelled})`,
    );
  }
  return lines.join("\n");
}

/**
 * The same texts as an evasive writer would spell their personal data, each labelled span rewritten one way in turn
 * (the labels follow): a zero-width space inside it, a soft hyphen inside it, fullwidth digits and at signs, no-break
 * spaces for spaces. What a reader sees is the same value; a scan must find it the same.
 */
export function withEvasions(rows: readonly LabelledText[]): LabelledText[] {
  const spellings: Array<(value: string) => string> = [
    (value) =>
      `${value.slice(0, Math.ceil(value.length / 2))}\u200B${value.slice(Math.ceil(value.length / 2))}`,
    (value) =>
      `${value.slice(0, Math.ceil(value.length / 2))}\u00AD${value.slice(Math.ceil(value.length / 2))}`,
    (value) => value.replace(/[0-9@]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0)),
    (value) => value.replace(/ /g, "\u00A0"),
  ];
  return rows.map((row, index) => {
    const spell = spellings[index % spellings.length] as (value: string) => string;
    let text = "";
    let at = 0;
    const spans: LabelledSpan[] = [];
    for (const span of [...row.spans].sort((a, b) => a.start - b.start)) {
      if (span.start < at) continue; // overlapping labels: keep the first
      text += row.text.slice(at, span.start);
      const spelt = spell(row.text.slice(span.start, span.end));
      spans.push({ ...span, start: text.length, end: text.length + spelt.length });
      text += spelt;
      at = span.end;
    }
    return { ...row, text: text + row.text.slice(at), spans };
  });
}
