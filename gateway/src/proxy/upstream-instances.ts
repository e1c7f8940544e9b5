// The instances behind one upstream name, for session affinity. Two forms:
//   - SVC_UPSTREAM_INSTANCES_<SERVER> (e.g. SVC_UPSTREAM_INSTANCES_DOCS=http://10.0.0.5:8080,http://10.0.0.6:8080):
//     the listed origins, each its own connection pool; the path of `url` is used on each;
//   - otherwise the host of `url` when it resolves to several addresses of one family (a headless Service, several
//     A records): one origin per address, same scheme and port. Resolved again at most every RESOLVE_EVERY_MS, so
//     instances that come and go are followed. Plain http only: over https the certificate names the host, not an
//     address, so an https host with several addresses stays one origin (and gets the start-up warning).
// One address (an IP literal, a ClusterIP, a balancer) is one instance: nothing to pin.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

const RESOLVE_EVERY_MS = 5_000;
/** A host with more addresses than this is cut to the first ones: every instance is a pool. */
export const MAX_INSTANCES = 64;

/** What of a route says where its instances are: its origin, or the list SVC_UPSTREAM_INSTANCES_<SERVER> gave. */
export interface InstanceSource {
  readonly origin: string;
  readonly instanceOrigins?: readonly string[];
}

export type LookupAll = (host: string) => Promise<readonly { address: string; family: number }[]>;

export class UpstreamInstances {
  readonly #resolve: LookupAll;
  readonly #now: () => number;
  readonly #byHost = new Map<string, { origins: string[]; until: number; pending?: Promise<void> }>();
  /** Routes with one origin whatever DNS says (held weakly: a route goes with its config snapshot). */
  readonly #fixed = new WeakMap<InstanceSource, readonly string[]>();

  constructor(resolve: LookupAll = (host) => lookup(host, { all: true }), now: () => number = Date.now) {
    this.#resolve = resolve;
    this.#now = now;
  }

  /** The route's instance origins; one element when there is nothing to choose between. */
  async originsOf(route: InstanceSource): Promise<readonly string[]> {
    const known = this.knownOrigins(route);
    if (known !== undefined) return known;
    const url = new URL(route.origin);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (url.protocol !== "http:" || isIP(host) !== 0) {
      // An IP literal or https origin never resolves to more: remembered per route, not parsed per request.
      const only = [route.origin];
      this.#fixed.set(route, only);
      return only;
    }
    const key = route.origin;
    let entry = this.#byHost.get(key);
    if (entry === undefined || (this.#now() >= entry.until && entry.pending === undefined)) {
      const refreshed = this.#refresh(key, url, host);
      if (entry === undefined) {
        await refreshed;
        entry = this.#byHost.get(key);
      }
    }
    return entry?.origins ?? [route.origin];
  }

  /**
   * The route's origins when no lookup can change them (configured instances, an IP literal or https origin seen
   * before): what the request path asks first, so that the common case costs no promise. Undefined: ask originsOf.
   */
  knownOrigins(route: InstanceSource): readonly string[] | undefined {
    return route.instanceOrigins ?? this.#fixed.get(route);
  }

  #refresh(key: string, url: URL, host: string): Promise<void> {
    const previous = this.#byHost.get(key);
    const pending = this.#resolve(host)
      .then((found) => {
        const byFamily = [4, 6].map((family) => [
          ...new Set(found.filter((a) => a.family === family).map((a) => a.address)),
        ]);
        const several = byFamily.find((addresses) => addresses.length > 1);
        const origins =
          several === undefined
            ? [url.origin]
            : several.slice(0, MAX_INSTANCES).map((address) => {
                const port = url.port === "" ? "" : `:${url.port}`;
                return `http://${address.includes(":") ? `[${address}]` : address}${port}`;
              });
        this.#byHost.set(key, { origins, until: this.#now() + RESOLVE_EVERY_MS });
      })
      // Not resolving now: keep what was known (the request path reports an unreachable host itself).
      .catch(() => {
        this.#byHost.set(key, {
          origins: previous?.origins ?? [url.origin],
          until: this.#now() + RESOLVE_EVERY_MS,
        });
      });
    this.#byHost.set(key, {
      origins: previous?.origins ?? [url.origin],
      until: previous?.until ?? 0,
      pending,
    });
    return pending;
  }
}

/** SVC_UPSTREAM_INSTANCES_<SERVER>: a comma-separated list of http(s) origins; a problem when one is not. */
export function instanceOriginsFrom(
  value: string | undefined,
  variable: string,
): string[] | { problem: string } | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const origins: string[] = [];
  for (const item of value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")) {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      return { problem: `${variable}: '${item}' is not a URL (expected e.g. http://10.0.0.5:8080)` };
    }
    if (
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.pathname !== "/" ||
      url.search !== ""
    ) {
      return {
        problem: `${variable}: '${item}' must be an http(s) origin without a path (the path comes from url)`,
      };
    }
    origins.push(url.origin);
  }
  if (origins.length > MAX_INSTANCES) return { problem: `${variable}: at most ${MAX_INSTANCES} instances` };
  return [...new Set(origins)];
}
