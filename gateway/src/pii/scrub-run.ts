import { normalizeForDetection } from "../text/normalize.ts";
import type { CompiledCustomRules } from "./custom-rules.ts";
import { MASK_TEXT } from "./custom-rules.ts";
import type { LimitExceeded, LimitName, ScrubLimits } from "./limits.ts";
import { UNSCANNED_MARKER } from "./limits.ts";
import {
  type ActiveRecognizer,
  applyDetections,
  detect,
  resolveOverlaps,
  toOriginalSpans,
} from "./text-scanner.ts";

// One scrubText or scrubValue call: walks the value, scrubs what it may, tallies what it replaced, and stops
// reading at the first bound it reaches (limits.ts).

/** The count key for masked `sensitive_fields`. */
export const SENSITIVE_FIELD_COUNT = "SENSITIVE_FIELD";

/** Integers below this (five digits and fewer) are too short for any recognizer of digits: not scanned. */
const SHORTEST_SCANNED_NUMBER = 100_000;

export interface PiiFinding {
  /** Entity type (`EMAIL_ADDRESS`, ...) or custom rule name (`custom_rules[0]`). */
  entity: string;
  /** Offsets into the input string, UTF-16 code units (as JS strings index). */
  start: number;
  end: number;
  score: number;
}

export interface ScrubEngine {
  readonly recognizers: readonly ActiveRecognizer[];
  readonly rules: CompiledCustomRules;
  readonly sensitiveFields: ReadonlySet<string>;
  readonly whitelistFields: ReadonlySet<string>;
  readonly limits: ScrubLimits;
}

export class ScrubRun {
  readonly counts: Record<string, number> = {};
  readonly findings: PiiFinding[] = [];
  limitExceeded: LimitExceeded | undefined;
  changed = false;
  private textScanned = 0;
  private nodes = 0;
  private findingsKept = 0;
  private costlyChecks = 0;
  private readonly engine: ScrubEngine;
  private readonly recordFindings: boolean;

  constructor(engine: ScrubEngine, recordFindings: boolean) {
    this.engine = engine;
    this.recordFindings = recordFindings;
  }

  /** `text` with its findings replaced; `UNSCANNED_MARKER` when a bound stops the scan. */
  scrubString(text: string, fieldName: string): string {
    const { limits } = this.engine;
    if (this.limitExceeded !== undefined) return UNSCANNED_MARKER;
    if (text.length > limits.maxStringLength) {
      return this.exceeded("maxStringLength", `a string of ${text.length} characters`);
    }
    if (this.textScanned + text.length > limits.maxTextPerValue) {
      return this.exceeded(
        "maxTextPerValue",
        `more than ${limits.maxTextPerValue} characters of text in one value`,
      );
    }
    this.textScanned += text.length;
    // Recognizers and rules read the detection form (fullwidth, invisible and look-alike characters folded); each
    // finding is mapped back, so its replacement covers exactly the original characters it was read from.
    const normalized = normalizeForDetection(text);
    // Compatibility forms can expand (a ligature, an Arabic ligature of 18 letters): what is scanned counts.
    if (normalized.text.length > text.length) {
      this.textScanned += normalized.text.length - text.length;
      if (this.textScanned > limits.maxTextPerValue) {
        return this.exceeded(
          "maxTextPerValue",
          `more than ${limits.maxTextPerValue} characters of text in one value`,
        );
      }
    }
    const detections = detect(
      normalized.text,
      this.engine.recognizers,
      this.engine.rules,
      fieldName,
      this.spendCostlyCheck,
    );
    if (this.costlyChecks > limits.maxCostlyChecks) {
      return this.exceeded(
        "maxCostlyChecks",
        `more than ${limits.maxCostlyChecks} phone-number validations in one value`,
      );
    }
    if (detections.length === 0) return text;
    const kept = toOriginalSpans(resolveOverlaps(detections), normalized);
    if (this.findingsKept + kept.length > limits.maxFindings) {
      return this.exceeded("maxFindings", `more than ${limits.maxFindings} findings in one value`);
    }
    this.findingsKept += kept.length;
    for (const detection of kept) {
      if (!detection.continued) this.count(detection.entity);
      if (this.recordFindings) {
        const { entity, start, end, score } = detection;
        this.findings.push({ entity, start, end, score });
      }
    }
    const scrubbed = applyDetections(text, kept);
    if (scrubbed !== text) this.changed = true;
    return scrubbed;
  }

  private readonly spendCostlyCheck = (): boolean =>
    ++this.costlyChecks <= this.engine.limits.maxCostlyChecks;

  /** A JSON value with sensitive fields masked and strings scrubbed; the same object when nothing changed. */
  scrubValue(value: unknown, depth: number, fieldName: string, whitelisted: boolean): unknown {
    // Past the first bound nothing more is read: the caller is told to refuse, and nothing unscanned leaks.
    if (this.limitExceeded !== undefined) return UNSCANNED_MARKER;
    if (++this.nodes > this.engine.limits.maxNodes) {
      return this.exceeded("maxNodes", `more than ${this.engine.limits.maxNodes} JSON nodes in one value`);
    }
    if (typeof value === "string") {
      if (whitelisted) return value;
      return this.scrubEmbeddedJson(value, depth, fieldName) ?? this.scrubString(value, fieldName);
    }
    if (typeof value === "number") return this.scrubNumber(value, fieldName, whitelisted);
    if (typeof value !== "object" || value === null) return value;
    if (depth >= this.engine.limits.maxDepth) {
      return this.exceeded("maxDepth", `JSON nested deeper than ${this.engine.limits.maxDepth} levels`);
    }
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        const scrubbed = this.scrubValue(item, depth + 1, fieldName, whitelisted);
        if (scrubbed !== item) {
          copy ??= value.slice();
          copy[i] = scrubbed;
        }
      }
      return copy ?? value;
    }
    return this.scrubObject(value as Record<string, unknown>, depth, whitelisted);
  }

  /**
   * A card, SSN or phone number sent as a JSON number rather than a string is still that number: integers long enough
   * to be one are scanned as their decimal text, and a finding replaces the number by the scrubbed text (a string:
   * there is no number to mask it with).
   */
  private scrubNumber(value: number, fieldName: string, whitelisted: boolean): unknown {
    if (whitelisted || !Number.isSafeInteger(value) || value < SHORTEST_SCANNED_NUMBER) return value;
    const text = String(value);
    const scrubbed = this.scrubString(text, fieldName);
    return scrubbed === text ? value : scrubbed;
  }

  private scrubObject(object: Record<string, unknown>, depth: number, whitelisted: boolean): unknown {
    const { sensitiveFields, whitelistFields } = this.engine;
    let copy: Record<string, unknown> | undefined;
    const keys = Object.keys(object);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const item = object[key];
      const name = key.toLowerCase();
      let scrubbedKey = key;
      let scrubbed: unknown;
      if (sensitiveFields.has(name)) {
        // Masked whatever the value's type; its content is not walked.
        scrubbed = MASK_TEXT;
        if (item !== MASK_TEXT) this.count(SENSITIVE_FIELD_COUNT);
      } else if (whitelisted || whitelistFields.has(name)) {
        // Below a whitelisted field nothing is scanned, but a sensitive field is still masked: naming a field
        // sensitive is the stronger statement.
        scrubbed = this.scrubValue(item, depth + 1, "", true);
      } else {
        // The name before its value: a bound the value reaches leaves the name readable.
        scrubbedKey = this.scrubString(key, "");
        scrubbed = this.scrubValue(item, depth + 1, key, false);
      }
      if (scrubbed !== item || scrubbedKey !== key) {
        if (copy === undefined) {
          copy = {};
          for (let j = 0; j < i; j++) setOwn(copy, keys[j] as string, object[keys[j] as string]);
        }
        this.changed = true;
      }
      if (copy !== undefined) setOwn(copy, scrubbedKey, scrubbed);
    }
    return copy ?? object;
  }

  /**
   * Tool results carry JSON as text (`content[].text`): a string that is a JSON object or array is scrubbed as
   * JSON, so sensitive and whitelisted fields apply inside it too. Re-serialised only when something changed
   * (two-space indented when the original had line breaks). `undefined` when the string is not JSON.
   */
  private scrubEmbeddedJson(text: string, depth: number, fieldName: string): string | undefined {
    const { limits } = this.engine;
    // Too long for the budget: scrubString refuses it and names the bound.
    if (text.length > limits.maxStringLength || this.textScanned + text.length > limits.maxTextPerValue) {
      return undefined;
    }
    const first = firstNonSpace(text);
    if (first !== "{" && first !== "[") return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (typeof parsed !== "object" || parsed === null) return undefined;
    // Parsing read the whole text once: it counts against the text budget like a scan.
    this.textScanned += text.length;
    const scrubbed = this.scrubValue(parsed, depth + 1, fieldName, false);
    if (scrubbed === parsed) return text;
    return JSON.stringify(scrubbed, null, text.includes("\n") ? 2 : undefined);
  }

  private count(entity: string) {
    this.counts[entity] = (this.counts[entity] ?? 0) + 1;
  }

  private exceeded(limit: LimitName, what: string): string {
    this.limitExceeded ??= {
      limit,
      message: `${what} exceeds the scrubbing bound ${limit} (${this.engine.limits[limit]})`,
    };
    this.changed = true;
    return UNSCANNED_MARKER;
  }
}

function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const char = text.charAt(i);
    if (char !== " " && char !== "\n" && char !== "\r" && char !== "\t") return char;
  }
  return "";
}

/** Sets `key` as an own data property: a JSON key `__proto__` stays a key and never sets a prototype. */
function setOwn(object: Record<string, unknown>, key: string, value: unknown) {
  if (key === "__proto__") {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  } else object[key] = value;
}
