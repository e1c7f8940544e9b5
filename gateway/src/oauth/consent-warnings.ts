// What the consent page warns about before the user lets a client act as them: where the authorization code goes
// (the redirect URI's host, shown whatever else the page says), plain http to another machine, and a client whose
// name looks like a well-known application's while its code goes somewhere that application does not use — the
// consent phishing of an open registration ("Claude Desktop" with a redirect URI at evil.example).
import unhomoglyph from "unhomoglyph";
import { isLoopbackHost } from "./client-metadata-policy.ts";

/** A well-known client, and where its codes go: host names (subdomains included), `loopback`, or `scheme:<name>`. */
export interface KnownClient {
  name: string;
  redirects: readonly string[];
}

/** Clients users are likely to trust by name; oauth_server.consent.known_clients adds the company's own. */
export const KNOWN_CLIENTS: readonly KnownClient[] = [
  { name: "Claude", redirects: ["claude.ai", "claude.com", "anthropic.com", "loopback"] },
  { name: "ChatGPT", redirects: ["chatgpt.com", "openai.com"] },
  { name: "OpenAI", redirects: ["chatgpt.com", "openai.com", "loopback"] },
  { name: "Visual Studio Code", redirects: ["vscode.dev", "loopback", "scheme:vscode"] },
  { name: "VS Code", redirects: ["vscode.dev", "loopback", "scheme:vscode"] },
  { name: "Cursor", redirects: ["cursor.com", "cursor.sh", "scheme:cursor"] },
  { name: "GitHub Copilot", redirects: ["github.com", "loopback"] },
  { name: "Windsurf", redirects: ["windsurf.com", "codeium.com", "loopback"] },
  { name: "Gemini", redirects: ["gemini.google.com", "google.com", "loopback"] },
  { name: "MCP Inspector", redirects: ["loopback"] },
];

/** Where the code goes, as the user should read it. */
export type Destination =
  | { kind: "web"; host: string; plainHttp: boolean; loopback: boolean }
  | { kind: "app"; scheme: string };

export type ConsentWarning =
  | { kind: "plain_http"; host: string }
  | { kind: "looks_like"; known: string; destination: string };

export function destinationOf(redirectUri: string): Destination {
  const url = new URL(redirectUri);
  const scheme = url.protocol.slice(0, -1);
  if (scheme !== "http" && scheme !== "https") return { kind: "app", scheme };
  const loopback = isLoopbackHost(url.hostname);
  return { kind: "web", host: url.host, plainHttp: scheme === "http" && !loopback, loopback };
}

export function consentWarnings(
  clientName: string,
  destination: Destination,
  knownClients: readonly KnownClient[],
): ConsentWarning[] {
  const warnings: ConsentWarning[] = [];
  if (destination.kind === "web" && destination.plainHttp) {
    warnings.push({ kind: "plain_http", host: destination.host });
  }
  const name = skeleton(clientName);
  for (const known of knownClients) {
    if (!resembles(name, skeleton(known.name))) continue;
    if (known.redirects.some((allowed) => goesTo(destination, allowed))) continue;
    const shown = destination.kind === "web" ? destination.host : `${destination.scheme}:`;
    warnings.push({ kind: "looks_like", known: known.name, destination: shown });
    break;
  }
  return warnings;
}

function goesTo(destination: Destination, allowed: string): boolean {
  if (destination.kind === "app") return allowed === `scheme:${destination.scheme}`;
  if (allowed === "loopback") return destination.loopback;
  const host = new URL(`http://${destination.host}`).hostname.toLowerCase();
  return host === allowed || host.endsWith(`.${allowed}`);
}

/**
 * A name as it reads: compatibility forms folded (NFKC: full-width letters), Unicode confusables mapped to their
 * base letters (Cyrillic а, digit 0, capital I for l), case, spacing and punctuation dropped.
 */
export function skeleton(name: string): string {
  return unhomoglyph(name.normalize("NFKC"))
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "");
}

/** Contains the known name, or is it give or take a typo or two (one for short names). */
function resembles(name: string, known: string): boolean {
  if (known === "" || name === "") return false;
  if (name.includes(known)) return true;
  const allowed = known.length >= 6 ? 2 : 1;
  return Math.abs(name.length - known.length) <= allowed && editDistance(name, known, allowed) <= allowed;
}

/** Levenshtein distance, stopping once it exceeds `limit` (names are short; the page renders once per login). */
function editDistance(a: string, b: string, limit: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > limit) return best;
    previous = current;
  }
  return previous[b.length] as number;
}
