/** Largest attribute value detailed tracing records, in characters (README "Telemetry"). */
export const DETAIL_LIMIT = 4096;

/** Keys whose values are redacted: compared without case, "-" and "_", by suffix (`x_api_key`, `refreshToken`). */
const SECRET_SUFFIXES = [
  "password",
  "passwd",
  "secret",
  "token",
  "apikey",
  "authorization",
  "cookie",
  "credential",
  "credentials",
  "privatekey",
];

function isSecretKey(key: string): boolean {
  const normalized = key.toLowerCase().replace(/[-_]/g, "");
  return SECRET_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
}

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
        if (key !== "" && isSecretKey(key) && current !== null && typeof current !== "object")
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
