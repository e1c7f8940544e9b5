// Which vendor URLs the gateway sends a user's browser to. The vendor's metadata names its authorization endpoint,
// and the gateway redirects the browser there: a `javascript:` or `data:` URL would run the vendor's (or an
// attacker's) script in the user's browser, on whatever page follows the redirect or shows the link; plain `http:`
// would let anyone on the path read the code and rewrite the page. So: `https:` only, without credentials in the URL
// or a fragment (RFC 6749 section 3.1); `http:` only to a loopback host, and only in development
// (SVC_ALLOW_INSECURE_UPSTREAM_OAUTH), where the vendor runs on the developer's machine.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** Why `url` is not a URL to send a browser to, or undefined when it is. */
export function browserUrlProblem(url: string, development: boolean): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "it is not a URL";
  }
  if (parsed.username !== "" || parsed.password !== "") return "it carries credentials";
  if (parsed.hash !== "") return "it has a fragment";
  if (parsed.protocol === "https:") return undefined;
  if (parsed.protocol === "http:") {
    if (!isLoopbackHost(parsed.hostname)) return "it is plain http: to a host that is not loopback";
    return development
      ? undefined
      : "it is plain http: (allowed for loopback only with SVC_ALLOW_INSECURE_UPSTREAM_OAUTH)";
  }
  return `its scheme ${parsed.protocol} is not https:`;
}

function isLoopbackHost(hostname: string): boolean {
  if (hostname === "localhost") return true;
  const bare = hostname.startsWith("[") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) !== 0 && ipaddr.process(bare).range() === "loopback";
}
