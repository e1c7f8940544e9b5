import type { NormalizedText } from "../text/normalize.ts";
import { type ContextWords, contextVerdict, scoreWithContext, TextContext } from "./context.ts";
import { type CompiledCustomRules, findRuleMatches } from "./custom-rules.ts";
import type { Recognizer } from "./recognizer.ts";

// One string's findings: every active recognizer's candidates scored with context and kept from the
// threshold up, plus every custom rule match; overlaps resolved; replacements applied.

/** Presidio's floor for a context-boosted weak pattern: weak patterns need a context word, medium ones do not. */
export const SCORE_THRESHOLD = 0.4;
/** Custom rule matches are the operator's explicit word: certain. */
const CUSTOM_RULE_SCORE = 1;

export interface ActiveRecognizer {
  recognizer: Recognizer;
  /** Its replacement text: `<ENTITY_TYPE>` unless a layer sets `replacement`. */
  replace: () => string;
  context: ContextWords;
}

export interface Detection {
  entity: string;
  start: number;
  end: number;
  score: number;
  /** Custom rules win a tie against a recognizer with the same score and span length. */
  custom: boolean;
  /** Set on the second and later parts of a detection that a better one split: counted once, as the first. */
  continued?: boolean;
  /** The text the detection was read from, when the offsets were mapped back from the detection form. */
  matched?: string;
  replace: (match: string) => string;
}

const DIGIT = /[0-9]/;

export function detect(
  text: string,
  recognizers: readonly ActiveRecognizer[],
  rules: CompiledCustomRules,
  /** The JSON field holding the text ("" for none): its name is context too. */
  fieldName: string,
  spendCostlyCheck: () => boolean,
): Detection[] {
  const detections: Detection[] = [];
  const hasDigit = DIGIT.test(text);
  const around = new TextContext(text, fieldName);
  for (const { recognizer, replace, context } of recognizers) {
    if (recognizer.needsDigit && !hasDigit) continue;
    recognizer.find(
      text,
      (candidate) => {
        const score = scoreWithContext(context, candidate.score, around, candidate.start);
        if (score < SCORE_THRESHOLD) return;
        detections.push({ ...candidate, score, entity: recognizer.entity, custom: false, replace });
      },
      { contextAt: (start) => contextVerdict(context, around, start), spendCostlyCheck },
    );
  }
  if (rules.anyMatch === undefined || !rules.anyMatch.test(text)) return detections;
  for (const rule of rules.rules) {
    findRuleMatches(rule, text, (start, end) => {
      detections.push({
        entity: rule.name,
        start,
        end,
        score: CUSTOM_RULE_SCORE,
        custom: true,
        replace: rule.replace,
      });
    });
  }
  return detections;
}

/** Which of two overlapping detections keeps the contested characters: a total order, so results are stable. */
function outranks(a: Detection, b: Detection): number {
  return (
    b.score - a.score ||
    b.end - b.start - (a.end - a.start) ||
    Number(b.custom) - Number(a.custom) ||
    a.start - b.start ||
    (a.entity < b.entity ? -1 : a.entity > b.entity ? 1 : 0)
  );
}

/**
 * Non-overlapping detections in text order. Within each group of overlapping detections the higher score
 * (then the longer span) keeps its span; a lower-ranked detection keeps only the parts no better one
 * covers, so no character that any detection flagged is left readable.
 */
export function resolveOverlaps(detections: readonly Detection[]): Detection[] {
  const byStart = [...detections].sort((a, b) => a.start - b.start || b.end - a.end);
  const resolved: Detection[] = [];
  let group: Detection[] = [];
  let groupEnd = -1;
  const flush = () => {
    if (group.length === 1) resolved.push(...group);
    else if (group.length > 1) resolved.push(...resolveGroup(group));
    group = [];
  };
  for (const detection of byStart) {
    if (detection.start >= groupEnd) {
      flush();
      groupEnd = detection.end;
    } else groupEnd = Math.max(groupEnd, detection.end);
    group.push(detection);
  }
  flush();
  return resolved;
}

function resolveGroup(group: readonly Detection[]): Detection[] {
  const kept: Detection[] = [];
  for (const detection of [...group].sort(outranks)) {
    let pieces = [{ start: detection.start, end: detection.end }];
    for (const better of kept) {
      pieces = pieces.flatMap((piece) => {
        if (better.end <= piece.start || better.start >= piece.end) return [piece];
        const parts = [];
        if (piece.start < better.start) parts.push({ start: piece.start, end: better.start });
        if (better.end < piece.end) parts.push({ start: better.end, end: piece.end });
        return parts;
      });
    }
    pieces.forEach((piece, index) => {
      kept.push(index === 0 ? { ...detection, ...piece } : { ...detection, ...piece, continued: true });
    });
  }
  return kept.sort((a, b) => a.start - b.start);
}

/**
 * Detections found in the detection form of a text (text/normalize.ts), with offsets into the original: each covers
 * every original character its span was read from. Two spans that came from parts of one original character (a
 * ligature split between findings) are kept apart, the later one starting where the earlier ends.
 */
export function toOriginalSpans(detections: readonly Detection[], normalized: NormalizedText): Detection[] {
  if (!normalized.changed) return detections as Detection[];
  const out: Detection[] = [];
  let previousEnd = 0;
  for (const detection of detections) {
    const span = normalized.originalSpan(detection.start, detection.end);
    const start = Math.max(span.start, previousEnd);
    if (span.end <= start) continue;
    const matched = normalized.text.slice(detection.start, detection.end);
    out.push({ ...detection, start, end: span.end, matched });
    previousEnd = span.end;
  }
  return out;
}

/** `text` with each (non-overlapping, ordered) detection replaced. */
export function applyDetections(text: string, detections: readonly Detection[]): string {
  let out = "";
  let at = 0;
  for (const detection of detections) {
    // A rule that hashes its match hashes what was read (the detection form): one value, one hash, however spelt.
    const matched = detection.matched ?? text.slice(detection.start, detection.end);
    out += text.slice(at, detection.start) + detection.replace(matched);
    at = detection.end;
  }
  return out + text.slice(at);
}
