// The one canonical form of what names a capability (a tool or prompt name, a resource URI or URI template), and the
// readings RBAC decides over. The gateway compares strings, the upstream resolves them: whatever spelling an upstream
// would resolve to a denied capability must be refused, so the gateway (1) refuses outright what has no business in a
// name or URI (control and format characters, lone surrogates, white space at either end, broken percent-encoding),
// and (2) decides over every plausible reading of what is left, admitting only when every reading is admitted
// (rbac/decide.ts). Override patterns go through the same readings, once per configuration (rbac/patterns.ts).
import { TextDecoder } from "node:util";

/** The three kinds of capability an MCP message can name. */
export type CapabilityKind = "tools" | "resources" | "prompts";

// ---- refusals ---------------------------------------------------------------------------------------------------

/** Printable ASCII without white space at either end: nearly every real name and URI, checked with one test. */
const PLAIN_ASCII = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** Control (C0, DEL, C1), format (zero-width, bidi, BOM, …), lone surrogate and line/paragraph separator characters. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const EDGE_SPACE = /^\s|\s$/u;
/** `%` not followed by two hex digits: not a URI (RFC 3986 section 2.1), and read differently by every decoder. */
const BROKEN_PERCENT = /%(?![0-9A-Fa-f]{2})/;

const hex = (codePoint: number) => `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;

function characterProblem(text: string): string | undefined {
  const invisible = INVISIBLE.exec(text);
  if (invisible !== null) {
    const char = invisible[0];
    const what = /\p{Cc}/u.test(char)
      ? "a control character"
      : /\p{Cf}/u.test(char)
        ? "a format character"
        : /\p{Cs}/u.test(char)
          ? "a lone surrogate"
          : "a line or paragraph separator";
    return `contains ${what} (${hex(char.codePointAt(0) ?? 0)}) at index ${invisible.index}`;
  }
  const edge = EDGE_SPACE.exec(text);
  if (edge !== null) {
    const where = edge.index === 0 ? "starts" : "ends";
    return `${where} with white space (${hex(edge[0].codePointAt(0) ?? 0)})`;
  }
  return undefined;
}

/**
 * Why `text` cannot name a capability, or undefined when it can; `field` (e.g. `params.uri`) starts the message. For
 * URIs the percent-decoded text must pass too: `%00` is a NUL to any upstream that decodes.
 */
export function textProblem(field: string, text: string, kind: CapabilityKind): string | undefined {
  if (text === "") return `${field} is empty`;
  const isUri = kind === "resources";
  if (PLAIN_ASCII.test(text) && !(isUri && text.includes("%"))) return undefined;
  const problem = characterProblem(text);
  if (problem !== undefined) return `${field} ${problem}`;
  if (!isUri || !text.includes("%")) return undefined;
  if (BROKEN_PERCENT.test(text)) return `${field} has a % that is not followed by two hex digits`;
  if (percentDecode(text, STRICT_UTF8) === undefined)
    return `${field} has percent-encoded octets that are not UTF-8`;
  const { text: decoded, complete } = fullyDecoded(text);
  if (!complete) return `${field} is percent-encoded more than ${MAX_DECODING_ROUNDS} levels deep`;
  // Decoding only replaces %XX: a character one round brings in stays, so checking the last round covers them all.
  const decodedProblem = characterProblem(decoded);
  return decodedProblem === undefined ? undefined : `${field} percent-decoded ${decodedProblem}`;
}

// ---- percent-encoding -------------------------------------------------------------------------------------------

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const LENIENT_UTF8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const PERCENT_RUN = /(?:%[0-9A-Fa-f]{2})+/g;

/** Every valid percent-encoding decoded (runs as UTF-8); undefined when a run is not UTF-8 and `decoder` is strict. */
function percentDecode(text: string, decoder: TextDecoder): string | undefined {
  if (!text.includes("%")) return text;
  try {
    return text.replace(PERCENT_RUN, (run) => {
      const bytes = new Uint8Array(run.length / 3);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
      return decoder.decode(bytes);
    });
  } catch {
    return undefined;
  }
}

/**
 * Rounds of decoding that "fully decoded" goes to: an upstream decoding twice (or behind something that decodes
 * once) turns `%252F` into `/`. Deeper encodings occur in no real URI and are refused, which keeps the work bounded.
 */
const MAX_DECODING_ROUNDS = 4;

/** Decoded until nothing decodes any more, at most MAX_DECODING_ROUNDS times; `complete` false when cut short. */
function fullyDecoded(text: string): { text: string; complete: boolean } {
  let current = text;
  for (let round = 0; round < MAX_DECODING_ROUNDS; round++) {
    const next = percentDecode(current, LENIENT_UTF8) as string;
    if (next === current) return { text: current, complete: true };
    current = next;
  }
  return { text: current, complete: percentDecode(current, LENIENT_UTF8) === current };
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** RFC 3986 section 6.2.2.2: unreserved characters decoded, every other percent-encoding in upper-case hex. */
function normalisePercentEncoding(text: string): string {
  if (!text.includes("%")) return text;
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, digits: string) => {
    const char = String.fromCharCode(Number.parseInt(digits, 16));
    return UNRESERVED.test(char) ? char : `%${digits.toUpperCase()}`;
  });
}

// ---- RFC 3986 normal form ---------------------------------------------------------------------------------------

/** RFC 3986 appendix B: scheme, authority, path, query, fragment of any string. */
const URI_PARTS = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(\?[^#]*)?(#[\s\S]*)?$/;
const SCHEME = /^[A-Za-z][A-Za-z0-9+\-.]*$/;

/**
 * A URI in the RFC 3986 section 6.2.2 normal form: scheme and host lower-cased, percent-encodings of unreserved
 * characters decoded and the others' hex upper-cased, dot segments removed from a hierarchical path (one after an
 * authority or starting with `/`). Something that is not a URI (a first component that is no valid scheme) only
 * gets its percent-encodings normalised. Template expressions (`{id}`) and a trailing `*` pass through unchanged.
 */
export function canonicalUri(uri: string): string {
  const text = normalisePercentEncoding(uri);
  const parts = URI_PARTS.exec(text);
  if (parts === null) return text;
  const [, scheme, authority, path = "", query = "", fragment = ""] = parts;
  if (scheme !== undefined && !SCHEME.test(scheme)) return text;
  let out = scheme === undefined ? "" : `${scheme.toLowerCase()}:`;
  if (authority !== undefined) out += `//${lowerCaseHost(authority)}`;
  out += authority !== undefined || path.startsWith("/") ? removeDotSegments(path) : path;
  return out + query + fragment;
}

/** `user@Host:8080` → `user@host:8080`: the user information is case-sensitive, the host is not. */
function lowerCaseHost(authority: string): string {
  const at = authority.lastIndexOf("@") + 1;
  const host = authority
    .slice(at)
    .toLowerCase()
    .replace(/%[0-9a-f]{2}/g, (encoding) => encoding.toUpperCase());
  return authority.slice(0, at) + host;
}

/**
 * RFC 3986 section 5.2.4 for a path that is empty or starts with `/`, in one pass over its segments (the RFC's
 * string-rewriting loop is quadratic on a long run of `/./`).
 */
export function removeDotSegments(path: string): string {
  if (!path.includes(".")) return path;
  const segments = path.split("/");
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i] as string;
    const last = i === segments.length - 1;
    if (segment === ".") {
      if (last) out.push("");
    } else if (segment === "..") {
      out.pop();
      if (last) out.push("");
    } else {
      out.push(segment);
    }
  }
  return `/${out.join("/")}`;
}

// ---- readings ---------------------------------------------------------------------------------------------------

/** One way an upstream may resolve the text naming a capability; undefined when that reading cannot parse it. */
export interface Reading {
  /** For the decision's reason: "… (read <label>)". */
  label: string;
  read(text: string): string | undefined;
}

/**
 * The canonical form of a tool or prompt name: Unicode NFC. Names are opaque and case-sensitive (MCP); NFC only
 * merges spellings that render identically, so a name written decomposed in the configuration still governs the
 * composed one.
 */
export function canonicalName(name: string): string {
  return name.normalize("NFC");
}

const NAME_READINGS: readonly Reading[] = [
  { label: "in Unicode NFC", read: canonicalName },
  { label: "as sent", read: (text) => text },
];

/**
 * The readings of a resource URI, the canonical one first (its decision names the rule when all admit):
 * - the RFC 3986 normal form (canonicalUri);
 * - the string as sent (an upstream using it as a plain key);
 * - fully percent-decoded (up to MAX_DECODING_ROUNDS times), then normalised: an upstream decoding `%2F` to `/`
 *   before resolving `..`, once or more;
 * - the same with `\` as `/` (Windows paths, lenient URL parsers);
 * - the WHATWG URL (`new URL(uri).href`): what the MCP TypeScript SDK's McpServer looks resources up by; it also
 *   maps IRIs to URIs, default ports, `file://localhost`, IPv4 number forms and IDNA host names.
 */
const URI_READINGS: readonly Reading[] = [
  { label: "in RFC 3986 normal form", read: canonicalUri },
  { label: "as sent", read: (text) => text },
  { label: "percent-decoded", read: (text) => mapDecoded(text, (decoded) => decoded) },
  {
    label: "percent-decoded with \\ as /",
    read: (text) => mapDecoded(text, (decoded) => decoded.replaceAll("\\", "/")),
  },
  { label: "as a WHATWG URL", read: (text) => URL.parse(text)?.href },
];

/** The normal form of the fully decoded text, after `adjust`. */
function mapDecoded(text: string, adjust: (decoded: string) => string): string {
  return canonicalUri(adjust(fullyDecoded(text).text));
}

export const READINGS: Readonly<Record<CapabilityKind, readonly Reading[]>> = {
  tools: NAME_READINGS,
  prompts: NAME_READINGS,
  resources: URI_READINGS,
};
