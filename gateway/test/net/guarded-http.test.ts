// The outbound guard against real sockets: a loopback HTTP server stands for the internal service an attacker aims at,
// and counts every connection, so "refused" means no connection was made at all. Names resolve through a lookup of
// the test's own (`dns.lookup`'s signature), as a hostile DNS server would answer them.
import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo, LookupFunction } from "node:net";
import * as oauth from "oauth4webapi";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createGuardedFetch, type GuardedFetch, GuardedRequestError } from "../../src/net/guarded-http.ts";

/** The internal service: what it answers per path, and every connection and request it saw. */
let internal: Server;
let port: number;
let base: string;
let connections = 0;
const requests: Array<{ path: string; host: string | undefined }> = [];

const SECRET_BODY = "-ERR internal service banner: SECRET-0123";

beforeAll(async () => {
  internal = createServer((request, response) => {
    requests.push({ path: request.url ?? "", host: request.headers.host });
    switch (request.url) {
      case "/ok":
        response.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
        return;
      case "/redirect":
        response.writeHead(302, { location: "/elsewhere" }).end();
        return;
      case "/redirect-307":
        response.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
        return;
      case "/large-declared":
        response.writeHead(200, { "content-length": String(2048) }).end(SECRET_BODY.padEnd(2048, "x"));
        return;
      case "/large-chunked":
        response.writeHead(200, { "content-type": "text/plain" });
        for (let i = 0; i < 8; i++) response.write(SECRET_BODY.padEnd(512, "y"));
        response.end();
        return;
      case "/error":
        response.writeHead(500, { "content-type": "text/plain" }).end(SECRET_BODY);
        return;
      case "/stall-headers":
        return; // never answers
      case "/stall-body":
        response.writeHead(200, { "content-type": "text/plain" });
        response.write("partial");
        return; // never ends
      case "/.well-known/oauth-authorization-server":
        response.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
          }),
        );
        return;
      default:
        response.writeHead(404).end();
    }
  });
  internal.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
  port = (internal.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  internal?.closeAllConnections();
  await new Promise<void>((resolve) => (internal ? internal.close(() => resolve()) : resolve()));
});

const opened: GuardedFetch[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((guarded) => guarded.close()));
  connections = 0;
  requests.length = 0;
});

function guard(options: Parameters<typeof createGuardedFetch>[0] = {}): GuardedFetch {
  const guarded = createGuardedFetch({ lookup: hostileDns, ...options });
  opened.push(guarded);
  return guarded;
}

/** A DNS server under an attacker's control: names that resolve where the attacker wants. */
const ANSWERS: Record<string, LookupAddress[]> = {
  "internal.test": [{ address: "10.1.2.3", family: 4 }],
  "loop.test": [{ address: "127.0.0.1", family: 4 }],
  "v6loop.test": [{ address: "::1", family: 6 }],
  "mapped.test": [{ address: "::ffff:127.0.0.1", family: 6 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "nat64.test": [{ address: "64:ff9b::7f00:1", family: 6 }],
  "mixed.test": [
    { address: "93.184.215.14", family: 4 },
    { address: "127.0.0.1", family: 4 },
  ],
  "none.test": [],
  "vendor.test": [{ address: "127.0.0.1", family: 4 }],
};

const hostileDns: LookupFunction = (hostname, options, callback) => {
  const answer = ANSWERS[hostname];
  queueMicrotask(() => {
    if (answer === undefined) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 0);
    } else if (options.all === true) callback(null, answer);
    else callback(null, answer[0]?.address ?? "", answer[0]?.family ?? 4);
  });
};

async function refusal(promise: Promise<unknown>): Promise<GuardedRequestError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof GuardedRequestError))
    throw new Error(`expected a GuardedRequestError, got ${error}`);
  return error;
}

describe("schemes", () => {
  it.each([
    ["http: to a host the operator did not configure", () => `${base}/ok`],
    ["data:", () => "data:application/json,{}"],
    ["file:", () => "file:///etc/passwd"],
    ["javascript:", () => "javascript:alert(1)"],
    ["ftp:", () => `ftp://127.0.0.1:${port}/ok`],
    ["blob:", () => "blob:https://example.test/0000"],
  ])("refuses %s", async (_name, url) => {
    const error = await refusal(guard()(url()));
    expect(error.reason).toBe("scheme");
    expect(error.message).not.toContain("/etc/passwd");
    expect(connections).toBe(0);
  });
});

describe("addresses written into the URL", () => {
  // The URL parser turns every spelling into dotted-quad or bracketed IPv6 before the connection; each row must
  // still arrive at the check as the address it is, and be refused before a connection is opened.
  it.each([
    ["dotted loopback", () => `https://127.0.0.1:${port}/ok`],
    ["decimal", () => `https://2130706433:${port}/ok`],
    ["hex", () => `https://0x7f000001:${port}/ok`],
    ["octal", () => `https://0177.0.0.1:${port}/ok`],
    ["short", () => `https://127.1:${port}/ok`],
    ["mixed hex/octal parts", () => `https://0x7f.0.00.01:${port}/ok`],
    ["unspecified 0.0.0.0", () => `https://0.0.0.0:${port}/ok`],
    ["IPv6 loopback", () => `https://[::1]:${port}/ok`],
    ["IPv6 unspecified", () => `https://[::]:${port}/ok`],
    ["IPv4-mapped loopback", () => `https://[::ffff:127.0.0.1]:${port}/ok`],
    ["IPv4-mapped loopback, uncompressed", () => `https://[0:0:0:0:0:ffff:7f00:1]:${port}/ok`],
    ["IPv4-compatible loopback", () => `https://[::127.0.0.1]:${port}/ok`],
    ["NAT64 loopback", () => `https://[64:ff9b::127.0.0.1]:${port}/ok`],
    ["RFC 1918", () => "https://10.0.0.1/ok"],
    ["RFC 1918 172.16/12", () => "https://172.20.1.1/ok"],
    ["RFC 1918 192.168/16", () => "https://192.168.0.1/ok"],
    ["link-local metadata service", () => "https://169.254.169.254/latest/meta-data/"],
    ["CGNAT", () => "https://100.64.1.1/ok"],
    ["unique-local", () => "https://[fd00:ec2::254]/ok"],
    ["IPv6 link-local", () => "https://[fe80::1]/ok"],
    ["multicast", () => "https://224.0.0.1/ok"],
  ])("refuses %s", async (_name, url) => {
    const error = await refusal(guard()(url()));
    expect(error.reason).toBe("address");
    expect(error.message).toMatch(/^Refused a request to https:\/\/.+: it resolves to a .+ address/);
    expect(connections).toBe(0);
  });
});

describe("names resolving to refused addresses", () => {
  it.each([
    ["a private address", "internal.test"],
    ["loopback", "loop.test"],
    ["IPv6 loopback", "v6loop.test"],
    ["IPv4-mapped loopback", "mapped.test"],
    ["the metadata service", "metadata.test"],
    ["NAT64 of loopback", "nat64.test"],
    ["a public and a private address at once", "mixed.test"],
    ["no address", "none.test"],
  ])("refuses a name resolving to %s", async (_name, host) => {
    const error = await refusal(guard()(`https://${host}:${port}/ok`));
    expect(error.reason).toBe("address");
    expect(error.origin).toBe(`https://${host}:${port}`);
    expect(connections).toBe(0);
  });

  it("refuses localhost through the system's own resolver", async () => {
    const error = await refusal(
      guard({ lookup: undefined as unknown as LookupFunction })(`https://localhost:${port}/ok`),
    );
    expect(error.reason).toBe("address");
    expect(connections).toBe(0);
  });

  it("names an unknown host without quoting the resolver's text", async () => {
    const error = await refusal(guard()("https://unknown.test/ok"));
    expect(error.reason).toBe("unreachable");
    expect(error.message).toBe("https://unknown.test could not be reached (ENOTFOUND)");
  });

  it("connects to the address the lookup answered, through the same hook, when addresses are allowed (development)", async () => {
    const response = await guard({ allowInsecure: true })(`http://vendor.test:${port}/ok`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(requests).toEqual([{ path: "/ok", host: `vendor.test:${port}` }]);
  });
});

describe("origins the operator configured", () => {
  it("reaches a configured origin over plain http at a loopback address, and only that origin", async () => {
    const guarded = guard({ trustedOrigin: (origin) => origin === base });
    const response = await guarded(`${base}/ok`);
    expect(response.status).toBe(200);
    expect(response.url).toBe(`${base}/ok`);
    // Same host, another port: another origin, not configured.
    const other = await refusal(guarded(`http://127.0.0.1:${port + 1}/ok`));
    expect(other.reason).toBe("scheme");
    const otherName = await refusal(guarded(`https://loop.test:${port}/ok`));
    expect(otherName.reason).toBe("address");
  });

  it("answers a refused connection with its code only", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const closed = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const error = await refusal(guard({ trustedOrigin: () => true })(`${closed}/ok`));
    expect(error.reason).toBe("unreachable");
    expect(error.message).toBe(`${closed} could not be reached (ECONNREFUSED)`);
  });
});

describe("redirects", () => {
  it.each([
    ["a 302 on the same origin", "/redirect", 302],
    ["a 307 towards the metadata service", "/redirect-307", 307],
  ])("refuses %s and does not follow it", async (_name, path, status) => {
    const guarded = guard({ trustedOrigin: (origin) => origin === base });
    const error = await refusal(guarded(`${base}${path}`));
    expect(error.reason).toBe("redirect");
    expect(error.message).toContain(`HTTP ${status}`);
    expect(requests.map((request) => request.path)).toEqual([path]);
  });

  it("refuses a redirect even when the caller asks to follow it", async () => {
    const guarded = guard({ trustedOrigin: () => true });
    const error = await refusal(guarded(`${base}/redirect`, { redirect: "follow" }));
    expect(error.reason).toBe("redirect");
    expect(requests.map((request) => request.path)).toEqual(["/redirect"]);
  });
});

describe("bounds", () => {
  const trusted = () => guard({ trustedOrigin: () => true, maxResponseBytes: 1024, timeoutMs: 500 });

  it("refuses an answer that declares more than the bound, without quoting it", async () => {
    const error = await refusal(trusted()(`${base}/large-declared`));
    expect(error.reason).toBe("too_large");
    expect(error.message).toBe(`The answer from ${base} exceeds 1024 bytes`);
  });

  it("stops reading an answer that grows past the bound", async () => {
    const response = await trusted()(`${base}/large-chunked`);
    const error = await refusal(response.text());
    expect(error.reason).toBe("too_large");
    expect(error.message).not.toContain("SECRET");
  });

  it("hands an error status to the caller as a response, whose body the caller reads within the bound", async () => {
    const response = await trusted()(`${base}/error`);
    expect(response.status).toBe(500);
    expect(await response.text()).toBe(SECRET_BODY);
  });

  it("times out an upstream that never answers", async () => {
    const error = await refusal(trusted()(`${base}/stall-headers`));
    expect(error.reason).toBe("timeout");
    expect(error.message).toBe(`${base} did not answer within 500 ms`);
  });

  it("times out a body that never ends", async () => {
    const response = await trusted()(`${base}/stall-body`);
    const error = await refusal(response.text());
    expect(error.reason).toBe("timeout");
  });

  it("gives the caller's own abort back as it was", async () => {
    const controller = new AbortController();
    const pending = trusted()(`${base}/stall-headers`, { signal: controller.signal });
    controller.abort(new Error("caller gave up"));
    await expect(pending).rejects.toThrow("caller gave up");
  });
});

describe("as a fetch function of libraries", () => {
  it("keeps its own connection rules when the caller passes a dispatcher (oidc-provider does)", async () => {
    const dispatcher = new Agent();
    try {
      const error = await refusal(
        guard()(`https://127.0.0.1:${port}/ok`, { dispatcher } as RequestInit & { dispatcher: Agent }),
      );
      expect(error.reason).toBe("address");
      expect(connections).toBe(0);
    } finally {
      await dispatcher.close();
    }
  });

  it("serves oauth4webapi's discovery as customFetch", async () => {
    const guarded = guard({ trustedOrigin: (origin) => origin === base });
    const issuer = new URL(base);
    const response = await oauth.discoveryRequest(issuer, {
      algorithm: "oauth2",
      [oauth.customFetch]: guarded,
      [oauth.allowInsecureRequests]: true,
    });
    const metadata = await oauth.processDiscoveryResponse(issuer, response);
    expect(metadata.token_endpoint).toBe(`${base}/token`);
  });

  it("takes a Request object, its method, headers and body included", async () => {
    const guarded = guard({ trustedOrigin: () => true });
    const response = await guarded(
      new Request(`${base}/ok`, { method: "POST", headers: { "x-probe": "1" }, body: "{}" }),
    );
    expect(response.status).toBe(200);
    expect(requests).toEqual([{ path: "/ok", host: `127.0.0.1:${port}` }]);
  });
});
