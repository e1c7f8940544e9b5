// Instructions wrapped in base64 or hex are decoded so the detector can score them too. Bounded: at
// most MAX_DECODED_RUNS runs are decoded, each at most MAX_RUN_CHARS long; runs beyond are ignored.

export const MAX_DECODED_RUNS = 8;
export const MAX_RUN_CHARS = 8192;

/** Shorter runs of the base64 alphabet are not decoded (hex runs are longer and use a subset of that alphabet). */
export const SHORTEST_WRAPPED_RUN = 24;
const BASE64_RUN = new RegExp(`[A-Za-z0-9+/]{${SHORTEST_WRAPPED_RUN},}={0,2}`, "g");
const HEX_RUN = /\b(?:[0-9a-fA-F]{2}){16,}\b/g;
// A decoded run counts only if it reads as text: printable ASCII, tabs and line breaks only.
const PRINTABLE = /^[\t\n\r -~]*$/;

/** The printable texts hidden in base64 or hex runs of `text`, at most MAX_DECODED_RUNS of them. */
export function decodeWrappedRuns(text: string): string[] {
  const decoded: string[] = [];
  for (const [pattern, encoding] of [
    [BASE64_RUN, "base64"],
    [HEX_RUN, "hex"],
  ] as const) {
    for (const match of text.matchAll(pattern)) {
      if (decoded.length >= MAX_DECODED_RUNS) return decoded;
      const run = match[0].slice(0, MAX_RUN_CHARS);
      const plain = Buffer.from(run, encoding).toString("latin1");
      if (plain.length > 0 && PRINTABLE.test(plain)) decoded.push(plain);
    }
  }
  return decoded;
}
