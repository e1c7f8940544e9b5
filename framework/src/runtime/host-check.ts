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

/**
 * DNS-rebinding protection for a server bound to loopback: a browser tricked into calling it carries a foreign
 * Host (or Origin), which is refused with 403. Servers bound to other interfaces rely on authentication.
 */
export function loopbackHostGuard(): MiddlewareHandler {
  return async (c, next) => {
    const host = hostnameOf(c.req.header("host") ?? "");
    const origin = c.req.header("origin");
    const originHost = origin === undefined ? undefined : hostnameOf(origin);
    if (!host || !isLoopback(host) || (origin !== undefined && (!originHost || !isLoopback(originHost)))) {
      const message = `Forbidden: this server is bound to loopback and accepts only a localhost Host/Origin header`;
      return c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, 403);
    }
    await next();
  };
}
