// Error messages of the SIEM sink: the cause is named, the client secret never appears even when echoed back.
import { describe, expect, it } from "vitest";
import { describeSiemFailure } from "../../../src/audit/exporters/siem-failure.ts";

const context = {
  timedOut: false,
  timeoutSeconds: 30,
  secret: "s3cr3t~value",
  tenantId: "tenant-1",
  clientId: "client-1",
};

function headers(values: Record<string, string>) {
  return { get: (name: string) => values[name.toLowerCase()] };
}

describe("describeSiemFailure", () => {
  it("cuts the client secret out of a refusal that echoes it", () => {
    const refusal = Object.assign(new Error("refused s3cr3t~value"), {
      name: "AuthenticationError",
      statusCode: 401,
      errorResponse: { error: "invalid_client", errorDescription: "secret s3cr3t~value is wrong" },
    });
    const failure = describeSiemFailure(refusal, context);
    expect(failure.message).toBe(
      "token request for tenant tenant-1 as client client-1 failed (HTTP 401): invalid_client: secret <redacted> is wrong",
    );
  });

  it("reads Retry-After in seconds, as a date, and Azure's millisecond headers", () => {
    const throttled = (values: Record<string, string>) =>
      describeSiemFailure(
        { name: "RestError", statusCode: 429, message: "slow down", response: { headers: headers(values) } },
        context,
      );
    expect(throttled({ "retry-after": "12" }).retryAfterMs).toBe(12_000);
    expect(throttled({ "retry-after-ms": "250", "retry-after": "12" }).retryAfterMs).toBe(250);
    expect(throttled({ "x-ms-retry-after-ms": "900" }).retryAfterMs).toBe(900);
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    expect(throttled({ "retry-after": inAMinute }).retryAfterMs).toBeGreaterThan(50_000);
    expect(throttled({ "retry-after": "soon" }).retryAfterMs).toBeUndefined();
    expect(throttled({}).message).toBe("ingestion endpoint answered HTTP 429: slow down");
  });

  it("bounds the message length", () => {
    const failure = describeSiemFailure(new Error("x".repeat(10_000)), context);
    expect(failure.message.length).toBeLessThanOrEqual(501);
  });
});
