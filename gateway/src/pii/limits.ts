// Everything the engine does grows with its input, so each dimension has a bound. Past the first one reached,
// the engine reads no further: every string or subtree it did not scan is replaced by UNSCANNED_MARKER and the
// result names the bound (`limitExceeded`), so the caller can refuse the message instead (what
// docs/scrubbing.md recommends).

export interface ScrubLimits {
  /** Longest string scanned, in UTF-16 code units; a longer one is not scanned at all. */
  maxStringLength: number;
  /** Total string length scanned in one value (all its strings and field names together). */
  maxTextPerValue: number;
  /** Deepest nesting of objects and arrays walked (embedded JSON text counts as one more level). */
  maxDepth: number;
  /** Most JSON nodes (objects, arrays, strings, numbers, ...) walked in one value. */
  maxNodes: number;
  /** Most findings kept in one value (each costs a replacement and, in scrubText, an entry in `findings`). */
  maxFindings: number;
  /**
   * Most costly checks in one value: a libphonenumber parse of a phone-number candidate costs 10-60 µs, and
   * text made of digit groups could ask for one per region tried for every 14 characters.
   */
  maxCostlyChecks: number;
}

export const DEFAULT_SCRUB_LIMITS: Readonly<ScrubLimits> = {
  maxStringLength: 256 * 1024,
  maxTextPerValue: 1024 * 1024,
  maxDepth: 64,
  maxNodes: 100_000,
  maxFindings: 10_000,
  maxCostlyChecks: 2_000,
};

/** What replaces a string or subtree past a bound: never forwarded unscanned. */
export const UNSCANNED_MARKER = "[UNSCANNED]";

export type LimitName = keyof ScrubLimits;

export interface LimitExceeded {
  limit: LimitName;
  /** e.g. "a string of 300000 characters is longer than maxStringLength (262144)" */
  message: string;
}
