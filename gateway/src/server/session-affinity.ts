// `session_affinity: true` (the default) asks for every request of an MCP session to reach the same upstream
// instance. The gateway pins sessions to instances it can tell apart (pipeline/affinity-step.ts): listed ones, and the
// addresses of an http host. An https host it cannot split into addresses (the certificate names the host), so it is
// one connection pool whose new connections resolve the host again, and when it has several addresses the requests
// of one session can land on different instances. Whether that happens depends on DNS, which changes without the file changing, so it cannot be a load
// problem (the same file would be valid one minute and refused the next, and `svc-gateway validate` would answer
// differently from the gateway). Instead, at start and after every reload, each enabled server asking for affinity
// whose host resolves to several addresses of one family gets a warning. What is behind a single address (a
// Kubernetes ClusterIP, a load balancer) cannot be seen from here; operations.md says so.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { ServerConfig } from "../config/index.ts";
import type { Logger } from "../log/logger.ts";

export type LookupAll = (host: string) => Promise<readonly { address: string; family: number }[]>;

export interface UnpinnedServer {
  server: string;
  host: string;
  /** The addresses of the family that has several (IPv4 or IPv6). */
  addresses: string[];
}

const systemLookup: LookupAll = (host) => lookup(host, { all: true });

/** At most this many addresses go into a warning: a host with hundreds would otherwise flood one log line. */
const ADDRESSES_SHOWN = 10;

/**
 * The servers whose affinity cannot be kept: enabled, `session_affinity: true`, and a host that resolves to several
 * IPv4 or several IPv6 addresses. One IPv4 plus one IPv6 address is the usual dual-stack single host, not two
 * instances. A host that does not resolve is left to the request path, which reports it.
 */
export async function findUnpinnedServers(
  servers: readonly ServerConfig[],
  resolve: LookupAll = systemLookup,
): Promise<UnpinnedServer[]> {
  const hostOf = (server: ServerConfig) => new URL(server.url).hostname.replace(/^\[(.*)\]$/, "$1");
  const candidates = servers.filter(
    (server) =>
      server.enabled &&
      server.session_affinity &&
      new URL(server.url).protocol === "https:" &&
      isIP(hostOf(server)) === 0,
  );
  const hosts = [...new Set(candidates.map(hostOf))];
  const several = new Map<string, string[]>();
  await Promise.all(
    hosts.map(async (host) => {
      const found = await resolve(host).catch(() => []);
      for (const family of [4, 6]) {
        const addresses = [...new Set(found.filter((a) => a.family === family).map((a) => a.address))];
        if (addresses.length > 1) several.set(host, addresses);
      }
    }),
  );
  return candidates.flatMap((server) => {
    const addresses = several.get(hostOf(server));
    return addresses === undefined ? [] : [{ server: server.name, host: hostOf(server), addresses }];
  });
}

/**
 * Runs the check in the background, so a slow resolver never holds up a start or a reload. One check at a time; a
 * configuration that arrives meanwhile waits, replacing any that was already waiting, so reloads in quick succession
 * cost at most one extra check.
 */
export class SessionAffinityWarnings {
  #running = false;
  #waiting: readonly ServerConfig[] | undefined;
  readonly #logger: Logger;
  readonly #resolve: LookupAll;

  constructor(logger: Logger, resolve: LookupAll = systemLookup) {
    this.#logger = logger;
    this.#resolve = resolve;
  }

  check(servers: readonly ServerConfig[]): void {
    this.#waiting = servers;
    if (!this.#running) void this.#run();
  }

  async #run(): Promise<void> {
    this.#running = true;
    while (this.#waiting !== undefined) {
      const servers = this.#waiting;
      this.#waiting = undefined;
      for (const unpinned of await findUnpinnedServers(servers, this.#resolve)) {
        this.#logger.warn(
          "session_affinity cannot be kept: the https upstream host resolves to several addresses and the gateway cannot pin a session to one of them over TLS, so the requests of one MCP session can reach different instances. List the instances in SVC_UPSTREAM_INSTANCES_<SERVER>, point url at a balancer that keeps sessions together, or set session_affinity: false",
          {
            server: unpinned.server,
            host: unpinned.host,
            addresses: unpinned.addresses.slice(0, ADDRESSES_SHOWN),
            address_count: unpinned.addresses.length,
          },
        );
      }
    }
    this.#running = false;
  }
}
