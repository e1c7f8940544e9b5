import { isIPv6 } from "node:net";
import { patternRecognizer } from "../recognizer.ts";
import { NEAR_MISS_WORDS } from "./near-miss-words.ts";

// IPv4 dotted quads (each octet 0-255, not inside a longer dotted run such as a four-part version string),
// and IPv6 in any of its textual forms: a loose run of hex digits and colons proposes, node:net decides.
const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`(?<![\\w.])${OCTET}(?:\\.${OCTET}){3}(?!\\.?\\w)`, "g");
const IPV6 =
  /(?<![\w:.])(?=[0-9A-Fa-f]{0,4}::?[0-9A-Fa-f]{0,4}:)[0-9A-Fa-f:]{2,39}(?:\.\d{1,3}){0,3}(?![\w:.])/g;
// A dotted quad holds digits: text without one skips IPV4.
const DIGIT = /\d/;
// IPV6's lookahead needs two colons with at most four hex digits between them: a text without such a pair (most
// prose, "Note: ...", times such as 10:30) skips IPV6, which tries its lookarounds at every position. Found from
// each colon (indexOf, a fast search) rather than by the regular expression /:[0-9A-Fa-f]{0,4}:/, which V8 tries at
// every position and which cost as much as IPV6 itself on colon-free prose.
const TWO_COLONS_APART_BY_HEX = {
  test(text: string): boolean {
    for (let colon = text.indexOf(":"); colon !== -1; colon = text.indexOf(":", colon + 1)) {
      for (let at = colon + 1; at <= colon + 5 && at < text.length; at++) {
        const code = text.charCodeAt(at);
        if (code === 58) return true;
        const hex = (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102);
        if (!hex) break;
      }
    }
    return false;
  },
};

// Four single-digit parts ("8.8.8.8", "1.2.3.4") are often version strings: just over the threshold alone, so an
// address with nothing around it is found, and any word announcing a version ("release", "upgraded from", "build")
// drops it, while an address word ("ip", "dns", "host") makes it certain.
const SINGLE_DIGIT_QUAD = /^\d\.\d\.\d\.\d$/;
/** Words announcing a version rather than an address: besides the near-miss words, how upgrades are told. */
const VERSION_WORDS = [
  "upgrade",
  "upgraded",
  "downgrade",
  "downgraded",
  "update",
  "updated",
  "patch",
  "patched",
  "firmware",
  "ver",
];

function validate(match: string): number | null | undefined {
  if (SINGLE_DIGIT_QUAD.test(match)) return 0.45;
  if (!match.includes(":")) return undefined;
  // "::" alone (the unspecified address) is more often C++ or a separator than an address.
  return isIPv6(match) && match !== "::" ? undefined : null;
}

export const ipAddressRecognizer = patternRecognizer({
  entity: "IP_ADDRESS",
  needsDigit: false,
  patterns: [
    { regex: IPV4, score: 0.6, requires: DIGIT },
    { regex: IPV6, score: 0.6, requires: TWO_COLONS_APART_BY_HEX },
  ],
  validate,
  context: [
    "ip",
    "ipv4",
    "ipv6",
    "address",
    "host",
    "client",
    "server",
    "addr",
    "dns",
    "resolver",
    "gateway",
    "router",
    "proxy",
    "nameserver",
  ],
  negativeContext: [...NEAR_MISS_WORDS, ...VERSION_WORDS],
});
