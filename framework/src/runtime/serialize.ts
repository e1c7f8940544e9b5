/** Largest attribute value detailed tracing records, in characters (README "Telemetry"). */
export const DETAIL_LIMIT = 4096;

const SECRET_KEY = /pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential/i;

/**
 * JSON for a span attribute that can never throw: cycles, BigInt, functions and bytes are replaced, values
 * under secret-looking keys are redacted, and the text is cut at `limit` characters with a marker.
 */
export function serializeForTrace(value: unknown, limit = DETAIL_LIMIT): string {
  let text: string;
  try {
    const seen = new WeakSet<object>();
    text =
      JSON.stringify(value, (key, current: unknown) => {
        if (key !== "" && SECRET_KEY.test(key) && current !== null && typeof current !== "object")
          return "[REDACTED]";
        if (typeof current === "bigint") return current.toString();
        if (typeof current === "function") return "[Function]";
        if (current instanceof Uint8Array) return `[${current.byteLength} bytes]`;
        if (typeof current === "object" && current !== null) {
          if (seen.has(current)) return "[Circular]";
          seen.add(current);
        }
        return current;
      }) ?? String(value);
  } catch (error) {
    text = `[unserializable: ${(error as Error).message}]`;
  }
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}…[truncated, ${text.length} chars]`;
}
