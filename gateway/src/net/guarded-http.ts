// net/ — the gateway's outbound HTTP towards targets that someone other than the operator chose.
//
// Vendor metadata names the URLs the gateway, as an OAuth client, calls next: an authorization server, its
// registration and token endpoints; a client's metadata document (CIMD) names itself. Whoever publishes that metadata
// chooses where the gateway sends a request from inside the cluster. Every such request goes through the fetch
// function made here, which refuses what an attacker would aim at:
//
// - a scheme other than https: (plain http: only for an origin the operator configured);
// - a host whose addresses include anything but global unicast (private, loopback, link-local, CGNAT, unique-local,
//   multicast, unspecified, IPv4-mapped/-compatible, NAT64, cloud metadata: see public-address.ts). The name is
//   resolved once per connection, every address checked, and the socket connects to the addresses that were checked
//   (the lookup hook of the connection itself, so a DNS answer that changes between a check and the connect
//   cannot slip through); the connected socket's remote address is checked again before a byte is written;
// - redirects (a redirect is the server choosing a second target; none is followed, the request fails);
// - answers larger than a bound, or slower than a bound (the whole exchange, body included).
//
// An origin the operator configured (a server's `url`, its `auth_server_url`) is trusted as written: plain http and
// private addresses are allowed for exactly that origin. SVC_ALLOW_INSECURE_UPSTREAM_OAUTH (development only) lifts
// the scheme and address rules everywhere; redirects and bounds hold even then.
//
// Errors are GuardedRequestError: they name the origin and the rule, never a path, a query or a byte of the answer,
// so they can be shown to the caller whose request triggered the fetch.
//
// The function is fetch-compatible: oauth4webapi takes it as `customFetch`, oidc-provider as its `fetch` option.
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector, type BodyInit as UndiciBodyInit, fetch as undiciFetch } from "undici";
import { addressRange, isPublicAddress } from "./public-address.ts";

/** Which rule refused a request; `unreachable` is a network failure (refused connection, unknown name, TLS). */
export type GuardReason = "scheme" | "address" | "redirect" | "too_large" | "timeout" | "unreachable";

export class GuardedRequestError extends Error {
  override readonly name = "GuardedRequestError";
  readonly reason: GuardReason;
  /** The origin the request was for; never its path or query (they may carry codes or secrets). */
  readonly origin: string;

  constructor(reason: GuardReason, origin: string, message: string) {
    super(message);
    this.reason = reason;
    this.origin = origin;
  }
}

export interface GuardedFetchOptions {
  /**
   * True for an origin (`https://host:port`, as `URL.origin` spells it) the operator configured: plain http and
   * private addresses are allowed for it. Asked per request, so it follows config reloads.
   */
  trustedOrigin?: (origin: string) => boolean;
  /** SVC_ALLOW_INSECURE_UPSTREAM_OAUTH: plain http and any address everywhere. Development only. */
  allowInsecure?: boolean;
  /** The whole exchange, connect to last body byte. Default 10 s. */
  timeoutMs?: number;
  /** The body after content decoding. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Name resolution (`dns.lookup`'s signature); tests resolve names of their own with it. */
  lookup?: LookupFunction;
}

export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface GuardedFetch extends FetchFunction {
  /** Closes the connections kept alive. */
  close(): Promise<void>;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Connections kept per origin: a flood of metadata requests queues instead of opening sockets without end. */
const CONNECTIONS_PER_ORIGIN = 8;

/** A resolved or connected address outside the allowed ranges, before the origin is known. */
class RefusedAddress extends Error {
  readonly range: string;
  constructor(range: string) {
    super(`address in a refused range (${range})`);
    this.range = range;
  }
}

export function createGuardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const insecure = options.allowInsecure === true;
  const trusted = (origin: string) => options.trustedOrigin?.(origin) === true;
  const allowedAddress = (address: string) => insecure || isPublicAddress(address);
  const open = buildConnector({});
  const checked = buildConnector({ lookup: checkedLookup(options.lookup ?? dnsLookup, allowedAddress) });
  const agent = new Agent({
    connections: CONNECTIONS_PER_ORIGIN,
    connect(target, callback) {
      if (trusted(`${target.protocol}//${target.host}`)) {
        open(target, callback);
        return;
      }
      // A literal address is never looked up: it is checked here, before the connection is opened.
      if (isIP(target.hostname) !== 0 && !allowedAddress(target.hostname)) {
        callback(new RefusedAddress(addressRange(target.hostname)), null);
        return;
      }
      checked(target, (error, socket) => {
        if (error !== null) {
          callback(error, null);
          return;
        }
        const remote = socket.remoteAddress;
        if (remote === undefined || !allowedAddress(remote)) {
          socket.destroy();
          callback(new RefusedAddress(remote === undefined ? "unknown" : addressRange(remote)), null);
          return;
        }
        callback(null, socket);
      });
    },
  });

  const guardedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(request?.url ?? (input as string | URL));
    const origin = url.origin;
    const plainAllowed = insecure || trusted(origin);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && plainAllowed)) {
      throw new GuardedRequestError(
        "scheme",
        originOrScheme(url),
        `Refused a request to ${originOrScheme(url)}: only https: URLs are fetched from remote metadata (plain http: only for an origin the operator configured)`,
      );
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const callerSignal = init?.signal ?? request?.signal ?? undefined;
    const signal = callerSignal === undefined ? timeout : AbortSignal.any([callerSignal, timeout]);
    const failure = (error: unknown) => {
      if (callerSignal?.aborted === true) return callerSignal.reason;
      return asGuardedError(error, origin, timeout.aborted, timeoutMs, maxBytes);
    };
    const body = init?.body ?? request?.body ?? undefined;
    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(url, {
        method: init?.method ?? request?.method ?? "GET",
        headers: headerPairs(init?.headers ?? request?.headers),
        // The web BodyInit of the caller and undici's are the same values under two type declarations.
        body: body as UndiciBodyInit | null,
        ...(body instanceof ReadableStream ? { duplex: "half" as const } : {}),
        redirect: "manual",
        signal,
        dispatcher: agent,
      });
    } catch (error) {
      throw failure(error);
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      throw new GuardedRequestError(
        "redirect",
        origin,
        `${origin} answered with a redirect (HTTP ${response.status}), which the gateway does not follow for metadata-driven requests`,
      );
    }
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(origin, maxBytes);
    }
    const result = new Response(
      response.body === null ? null : bounded(response.body, origin, maxBytes, failure),
      { status: response.status, statusText: response.statusText, headers: [...response.headers] },
    );
    Object.defineProperty(result, "url", { value: response.url });
    return result;
  };
  return Object.assign(guardedFetch, { close: () => agent.close() });
}

/**
 * `lookup` with every answer checked: the connection is given only addresses that passed, and a name with any refused
 * address is refused whole (an attacker's DNS may mix a public answer with a private one).
 */
function checkedLookup(lookup: LookupFunction, allowed: (address: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, answer) => {
      if (error !== null) {
        callback(error, "", 0);
        return;
      }
      const addresses: LookupAddress[] = Array.isArray(answer)
        ? answer
        : [{ address: answer, family: isIP(answer) }];
      const refused = addresses.find((entry) => !allowed(entry.address));
      if (refused !== undefined || addresses.length === 0) {
        callback(
          new RefusedAddress(refused === undefined ? "no address" : addressRange(refused.address)),
          "",
          0,
        );
        return;
      }
      if (options.all === true) callback(null, addresses);
      else callback(null, (addresses[0] as LookupAddress).address, (addresses[0] as LookupAddress).family);
    });
  };
}

/** The body as it is read, failing once more than `maxBytes` arrived (or the exchange's time ran out). */
function bounded(
  body: ReadableStream<Uint8Array>,
  origin: string,
  maxBytes: number,
  failure: (error: unknown) => unknown,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        seen += value.byteLength;
        if (seen > maxBytes) {
          await reader.cancel().catch(() => undefined);
          controller.error(tooLarge(origin, maxBytes));
          return;
        }
        controller.enqueue(value);
      } catch (error) {
        controller.error(failure(error));
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

function tooLarge(origin: string, maxBytes: number): GuardedRequestError {
  return new GuardedRequestError("too_large", origin, `The answer from ${origin} exceeds ${maxBytes} bytes`);
}

/** What a failed exchange becomes: the rule that refused it, or the network failure's code (never its text). */
function asGuardedError(
  error: unknown,
  origin: string,
  timedOut: boolean,
  timeoutMs: number,
  maxBytes: number,
): GuardedRequestError {
  if (error instanceof GuardedRequestError) return error;
  if (timedOut) {
    return new GuardedRequestError("timeout", origin, `${origin} did not answer within ${timeoutMs} ms`);
  }
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof RefusedAddress) {
      return new GuardedRequestError(
        "address",
        origin,
        `Refused a request to ${origin}: it resolves to a ${cause.range} address, which metadata-driven requests never reach (configure the origin to allow it)`,
      );
    }
    if (cause instanceof GuardedRequestError) return cause;
    const code = (cause as { code?: unknown }).code;
    if (code === "UND_ERR_RES_EXCEEDED_MAX_SIZE") return tooLarge(origin, maxBytes);
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) {
      return new GuardedRequestError("unreachable", origin, `${origin} could not be reached (${code})`);
    }
    cause = cause.cause;
  }
  return new GuardedRequestError("unreachable", origin, `${origin} could not be reached`);
}

/** The origin, or for a URL without one (data:, file:, javascript:) just its scheme: no content of the URL. */
function originOrScheme(url: URL): string {
  return url.origin === "null" ? url.protocol : url.origin;
}

function headerPairs(headers: ConstructorParameters<typeof Headers>[0]): [string, string][] {
  return [...new Headers(headers)];
}
