import type { MiddlewareHandler } from "hono";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host);
}

function hostnameOf(value: string): string | undefined {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).hostname;
  } catch {
    return undefined;
  }
}

/** Verdicts per header value: clients repeat the same Host on every request, so URL parsing runs once per value. */
const verdicts = new Map<string, boolean>();

function namesLoopback(value: string): boolean {
  let verdict = verdicts.get(value);
  if (verdict === undefined) {
    const host = hostnameOf(value);
    verdict = host !== undefined && host !== "" && isLoopback(host);
    if (verdicts.size >= 64) verdicts.clear(); // values are client-chosen: stay bounded
    verdicts.set(value, verdict);
  }
  return verdict;
}

/**
 * DNS-rebinding protection for a server bound to loopback: a browser tricked into calling it carries a foreign
 * Host (or Origin), which is refused with 403. Servers bound to other interfaces rely on authentication.
 */
export function loopbackHostGuard(): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (!namesLoopback(c.req.header("host") ?? "") || (origin !== undefined && !namesLoopback(origin))) {
      const message = `Forbidden: this server is bound to loopback and accepts only a localhost Host/Origin header`;
      return c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, 403);
    }
    await next();
  };
}
