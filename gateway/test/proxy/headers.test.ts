import { describe, expect, test } from "vitest";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "../../src/proxy/headers.ts";

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
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-session-id": "s-1",
    "mcp-protocol-version": "2025-11-25",
    "last-event-id": "e-9",
    "user-agent": "sdk",
    "accept-encoding": "gzip, br",
  };

  test("keeps end-to-end MCP headers, drops hop-by-hop and the client's credentials", () => {
    expect(upstreamRequestHeaders(incoming, "rid-1", undefined)).toEqual({
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      "mcp-session-id": "s-1",
      "mcp-protocol-version": "2025-11-25",
      "last-event-id": "e-9",
      "user-agent": "sdk",
      "x-request-id": "rid-1",
    });
  });

  test("upstream auth headers are added after filtering, so they replace nothing the client sent", () => {
    const headers = upstreamRequestHeaders(incoming, "rid-1", { authorization: "Bearer upstream-key" });
    expect(headers.authorization).toBe("Bearer upstream-key");
  });
});

describe("downstreamResponseHeaders", () => {
  test("keeps MCP headers, drops hop-by-hop, cookies and lengths the gateway recomputes", () => {
    expect(
      downstreamResponseHeaders(
        {
          "content-type": "text/event-stream",
          "mcp-session-id": "s-1",
          connection: "keep-alive",
          "keep-alive": "timeout=5",
          "transfer-encoding": "chunked",
          "content-length": "10",
          "set-cookie": ["a=1", "b=2"],
          "x-request-id": "upstream-id",
          vary: ["accept", "origin"],
        },
        "rid-2",
      ),
    ).toEqual({
      "content-type": "text/event-stream",
      "mcp-session-id": "s-1",
      vary: "accept, origin",
      "x-request-id": "rid-2",
    });
  });
});
