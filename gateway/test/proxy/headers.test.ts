import { describe, expect, test } from "vitest";
import {
  carriesIdentity,
  DEFAULT_FORWARDED_REQUEST_HEADERS,
  downstreamResponseHeaders,
  forwardedRequestHeaders,
  isIdentityEncoding,
  upstreamRequestHeaders,
} from "../../src/proxy/headers.ts";

describe("upstreamRequestHeaders", () => {
  const incoming = {
    host: "gateway.example",
    connection: "keep-alive, x-hop",
    "keep-alive": "timeout=5",
    "x-hop": "named in Connection",
    "transfer-encoding": "chunked",
    te: "trailers",
    upgrade: "h2c",
    "proxy-authorization": "Basic cHJveHk=",
    authorization: "Bearer client-token",
    dpop: "eyJ0eXAiOiJkcG9wK2p3dCJ9.proof.signature",
    cookie: "session=1",
    origin: "http://localhost:6274",
    "content-length": "12",
    "x-request-id": "client-chosen",
    "x-forwarded-for": "6.6.6.6",
    "x-forwarded-user": "admin",
    "x-custom": "not on the list",
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-session-id": "s-1",
    "mcp-protocol-version": "2025-11-25",
    "last-event-id": "e-9",
    "user-agent": "sdk",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "accept-encoding": "gzip, br",
  };
  const facts = {
    requestId: "rid-1",
    allowed: forwardedRequestHeaders([]),
    clientAddress: "::ffff:10.0.0.7",
    publicUrl: undefined,
    auth: undefined,
  };

  test("only listed headers cross; the gateway states the request id, encoding and forwarding facts itself", () => {
    expect(upstreamRequestHeaders(incoming, facts)).toEqual({
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-session-id": "s-1",
      "mcp-protocol-version": "2025-11-25",
      "last-event-id": "e-9",
      "user-agent": "sdk",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "x-request-id": "rid-1",
      "accept-encoding": "identity",
      "x-forwarded-for": "10.0.0.7",
      "x-forwarded-proto": "http",
      "x-forwarded-host": "gateway.example",
    });
  });

  test("X-Forwarded-Proto and -Host come from SVC_PUBLIC_URL when set", () => {
    const headers = upstreamRequestHeaders(incoming, { ...facts, publicUrl: "https://mcp.example.com:8443" });
    expect(headers["x-forwarded-proto"]).toBe("https");
    expect(headers["x-forwarded-host"]).toBe("mcp.example.com:8443");
  });

  test("a name listed in Connection is hop-by-hop even when it is on the list", () => {
    const headers = upstreamRequestHeaders({ ...incoming, connection: "traceparent" }, facts);
    expect(headers.traceparent).toBeUndefined();
  });

  test("upstream auth headers are added after filtering, so they replace nothing the client sent", () => {
    const headers = upstreamRequestHeaders(incoming, {
      ...facts,
      auth: { authorization: "Bearer upstream-key" },
    });
    expect(headers.authorization).toBe("Bearer upstream-key");
  });
});

describe("forwardedRequestHeaders (SVC_FORWARD_REQUEST_HEADERS)", () => {
  test("extends the defaults, case-insensitively", () => {
    const allowed = forwardedRequestHeaders([" X-Correlation-Id ", "Accept"]);
    expect([...allowed]).toEqual([...DEFAULT_FORWARDED_REQUEST_HEADERS, "x-correlation-id"]);
  });

  test.each([
    "authorization",
    "proxy-authorization",
    "cookie",
    "dpop",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-user",
    "x-real-ip",
    "true-client-ip",
    "x-remote-user",
    "x-remote-group",
    "x-auth-request-email",
    "x-webauth-user",
    "remote-user",
    "x-user-id",
    "x-employee-email",
    "x-api-key",
    "x-goog-authenticated-user-email",
    "x-ms-client-principal-name",
    "x-amzn-oidc-identity",
    "cf-access-jwt-assertion",
    "x-ssl-client-s-dn",
    "x-client-cert",
    "from",
  ])("refuses %s: credentials or client-asserted identity", (name) => {
    expect(carriesIdentity(name)).toBe(true);
    expect(() => forwardedRequestHeaders(["x-correlation-id", name.toUpperCase()])).toThrow(
      new RegExp(`'${name}' looks like a credential or an identity/forwarding header`),
    );
  });

  test("refuses what the gateway sets itself, malformed names and an unbounded list", () => {
    expect(() => forwardedRequestHeaders(["x-request-id"])).toThrow(/'x-request-id' is set by the gateway/);
    expect(() => forwardedRequestHeaders(["connection"])).toThrow(/'connection' is set by the gateway/);
    expect(() => forwardedRequestHeaders(["x bad"])).toThrow(/'x bad' is not an HTTP header name/);
    expect(() => forwardedRequestHeaders(Array.from({ length: 65 }, (_, i) => `x-h${i}`))).toThrow(
      /at most 64 header names, got 65/,
    );
  });
});

describe("downstreamResponseHeaders", () => {
  test("keeps only the listed headers; the request id is the gateway's", () => {
    expect(
      downstreamResponseHeaders(
        {
          "content-type": "text/event-stream",
          "mcp-session-id": "s-1",
          "mcp-protocol-version": "2025-11-25",
          "cache-control": "no-cache",
          "retry-after": "3",
          allow: "POST, DELETE",
          connection: "keep-alive",
          "keep-alive": "timeout=5",
          "transfer-encoding": "chunked",
          "content-length": "10",
          "set-cookie": ["a=1", "b=2"],
          "www-authenticate": 'Bearer resource_metadata="https://evil.example/m"',
          location: "https://evil.example/",
          "x-request-id": "upstream-id",
          "x-anything": "else",
          vary: ["accept", "origin"],
        },
        "rid-2",
      ),
    ).toEqual({
      "content-type": "text/event-stream",
      "mcp-session-id": "s-1",
      "mcp-protocol-version": "2025-11-25",
      "cache-control": "no-cache",
      "retry-after": "3",
      allow: "POST, DELETE",
      vary: "accept, origin",
      "x-request-id": "rid-2",
    });
  });
});

test("isIdentityEncoding accepts only identity", () => {
  expect(isIdentityEncoding("")).toBe(true);
  expect(isIdentityEncoding("Identity")).toBe(true);
  expect(isIdentityEncoding("gzip")).toBe(false);
  expect(isIdentityEncoding("identity, br")).toBe(false);
});
