// Discovery against real HTTP servers: an MCP endpoint publishing RFC 9728 metadata (or not) and a real
// oidc-provider as its authorization server. The clock is injected, so the cache's lifetime is tested without waiting.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateSigningKey, type RunningProvider, startProvider } from "svc-testkit/oidc-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerConfig } from "../../src/config/index.ts";
import { createGuardedFetch, type GuardedFetch } from "../../src/net/guarded-http.ts";
import { DISCOVERY_TTL_MS, UpstreamDiscovery } from "../../src/upstream-oauth/discovery.ts";

let provider: RunningProvider;
/** Everything here is on loopback over plain http: development mode. The guard's own rules are tested below. */
const developmentFetch: GuardedFetch = createGuardedFetch({ allowInsecure: true });
const discovery = (now?: () => number) => new UpstreamDiscovery(developmentFetch, now);
let upstream: Server;
let upstreamUrl: string;
/** What the upstream serves: metadata or not, and what its challenge points at. */
const behaviour = { metadata: true, challengeUrl: "" };
const requests: string[] = [];

beforeAll(async () => {
  provider = await startProvider({
    clients: [{ id: "c", secret: "s".repeat(32) }],
    keys: [generateSigningKey("RS256")],
  });
  upstream = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    if (request.method === "POST") {
      const challenge =
        behaviour.challengeUrl === "" ? "Bearer" : `Bearer resource_metadata="${behaviour.challengeUrl}"`;
      response.writeHead(401, { "www-authenticate": challenge }).end();
      return;
    }
    if (behaviour.metadata && request.url?.startsWith("/.well-known/oauth-protected-resource")) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          resource: `${upstreamUrl}`,
          authorization_servers: [provider.issuer],
          scopes_supported: ["files:read"],
        }),
      );
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await developmentFetch.close();
  upstream?.closeAllConnections();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  await provider?.close();
});

function server(fields: Partial<ServerConfig> = {}): ServerConfig {
  return { name: "acme", url: upstreamUrl, upstream_auth_type: "oauth", ...fields } as ServerConfig;
}

describe("discovery of a server's authorization server", () => {
  it("follows the metadata to the authorization server, caches it for its lifetime, and shares one discovery", async () => {
    let now = 1_000_000;
    const cached = discovery(() => now);
    requests.length = 0;
    const [first, concurrent] = await Promise.all([cached.discover(server()), cached.discover(server())]);
    expect(concurrent).toBe(first);
    expect(first.as.issuer).toBe(provider.issuer);
    expect(first.resource).toBe(upstreamUrl);
    expect(first.scopes).toEqual(["files:read"]);
    expect(requests).toEqual(["POST /mcp", "GET /.well-known/oauth-protected-resource/mcp"]);

    now += DISCOVERY_TTL_MS - 1;
    await cached.discover(server());
    expect(requests).toHaveLength(2);
    now += 2;
    await cached.discover(server());
    expect(requests).toHaveLength(4);
  });

  it("uses the challenge's resource_metadata on the upstream's origin, and ignores one elsewhere", async () => {
    behaviour.challengeUrl = `${new URL(upstreamUrl).origin}/.well-known/oauth-protected-resource/elsewhere`;
    requests.length = 0;
    await discovery().discover(server());
    expect(requests).toContain("GET /.well-known/oauth-protected-resource/elsewhere");
    behaviour.challengeUrl = "http://attacker.invalid/.well-known/oauth-protected-resource";
    requests.length = 0;
    await discovery().discover(server());
    expect(requests).toEqual(["POST /mcp", "GET /.well-known/oauth-protected-resource/mcp"]);
    behaviour.challengeUrl = "";
  });

  it("replaces the advertised scopes with scopes_override", async () => {
    const found = await discovery().discover(server({ scopes_override: "a b" }));
    expect(found.scopes).toEqual(["a", "b"]);
  });

  it("names the server and the fix when there is no metadata, and uses auth_server_url instead of it", async () => {
    behaviour.metadata = false;
    try {
      await expect(discovery().discover(server())).rejects.toThrow(
        /^Upstream server 'acme' uses upstream_auth_type oauth but publishes no usable protected-resource metadata .*; set auth_server_url to its authorization server's issuer$/,
      );
      requests.length = 0;
      const found = await discovery().discover(server({ auth_server_url: provider.issuer }));
      expect(found.as.issuer).toBe(provider.issuer);
      expect(found.resource).toBe(upstreamUrl);
      expect(found.scopes).toEqual([]);
      expect(requests).toEqual([]); // the upstream is not asked at all
    } finally {
      behaviour.metadata = true;
    }
  });

  it("names auth_server_url when it points at no authorization server", async () => {
    await expect(
      discovery().discover(server({ auth_server_url: `${new URL(upstreamUrl).origin}/nothing` })),
    ).rejects.toThrow(
      /^Upstream server 'acme': no authorization-server metadata could be read from .*; check auth_server_url$/,
    );
  });

  it("refuses an authorization server that the metadata names on a plain-http origin nobody configured", async () => {
    // The operator configured the upstream (its origin is trusted); its metadata names the provider elsewhere.
    const upstreamOrigin = new URL(upstreamUrl).origin;
    const guarded = createGuardedFetch({ trustedOrigin: (origin) => origin === upstreamOrigin });
    try {
      await expect(new UpstreamDiscovery(guarded).discover(server())).rejects.toThrow(
        `Upstream server 'acme': no authorization-server metadata could be read from ${provider.issuer} (RFC 8414: Refused a request to ${new URL(provider.issuer).origin}: only https: URLs are fetched from remote metadata`,
      );
    } finally {
      await guarded.close();
    }
  });
});
