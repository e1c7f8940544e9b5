import { describe, expect, test } from "vitest";
import { errorResponseParts } from "../../src/errors/error-response.ts";
import { asGatewayError, GatewayError } from "../../src/errors/gateway-error.ts";

describe("errorResponseParts: the one mapping from GatewayError to a response", () => {
  const unreachable = new GatewayError("upstream_unreachable", "Upstream server 'a' is unreachable", {
    server: "a",
  });

  test("before the body is parsed: a small JSON error object", () => {
    const parts = errorResponseParts(new GatewayError("server_not_found", "No upstream server named 'x'"), {
      requestId: "r1",
    });
    expect(parts.status).toBe(404);
    expect(parts.headers).toMatchObject({ "content-type": "application/json", "x-request-id": "r1" });
    expect(JSON.parse(parts.body)).toEqual({
      error: { code: "server_not_found", message: "No upstream server named 'x'" },
      request_id: "r1",
    });
  });

  test("after parsing: a JSON-RPC error per request id, naming the server", () => {
    const parts = errorResponseParts(unreachable, { requestId: "r2", rpcIds: [5] });
    expect(parts.status).toBe(502);
    expect(JSON.parse(parts.body)).toEqual({
      jsonrpc: "2.0",
      id: 5,
      error: {
        code: -32002,
        message: "Upstream server 'a' is unreachable",
        data: { reason: "upstream_unreachable", request_id: "r2", server: "a" },
      },
    });
  });

  test("a batch gets an array; no request ids (notifications, GET) gets id null", () => {
    const batch = JSON.parse(
      errorResponseParts(unreachable, { requestId: "r", rpcIds: [1, "b"], batch: true }).body,
    );
    expect(batch.map((m: { id: unknown }) => m.id)).toEqual([1, "b"]);
    expect(JSON.parse(errorResponseParts(unreachable, { requestId: "r", rpcIds: [] }).body).id).toBeNull();
  });

  test("timeouts are 504, extra headers are carried, unknown throwables become a bland 500", () => {
    expect(new GatewayError("upstream_timeout", "slow").status).toBe(504);
    const tooLarge = new GatewayError("body_too_large", "big", { headers: { connection: "close" } });
    expect(errorResponseParts(tooLarge, { requestId: "r" })).toMatchObject({
      status: 413,
      headers: { connection: "close" },
    });
    const internal = asGatewayError(new Error("secret detail"));
    expect(internal.code).toBe("internal");
    expect(errorResponseParts(internal, { requestId: "r" }).body).not.toContain("secret detail");
  });
});
