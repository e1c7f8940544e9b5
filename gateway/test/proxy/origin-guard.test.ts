import { describe, expect, test } from "vitest";
import { checkOrigin, isLoopbackAddress, parseAllowedOrigins } from "../../src/proxy/origin-guard.ts";

describe("parseAllowedOrigins", () => {
  test("normalises listed origins and understands *", () => {
    expect(parseAllowedOrigins(" https://App.Example.com:443/ , http://x.test:8080")).toEqual(
      new Set(["https://app.example.com", "http://x.test:8080"]),
    );
    expect(parseAllowedOrigins("https://a.test,*")).toBe("any");
    expect(parseAllowedOrigins(undefined)).toEqual(new Set());
  });
});

describe("checkOrigin", () => {
  const loopback = { allowed: parseAllowedOrigins("https://app.example.com"), loopbackBound: true };
  const public_ = { allowed: parseAllowedOrigins("https://app.example.com"), loopbackBound: false };

  test("no Origin (a non-browser client) passes", () => {
    expect(checkOrigin(public_, undefined, "gw.example")).toBeUndefined();
  });

  test("listed origins pass; others are refused with a message naming the header and the variable", () => {
    expect(checkOrigin(public_, "https://app.example.com", "gw.example")).toBeUndefined();
    const refusal = checkOrigin(public_, "https://evil.example", "gw.example");
    expect(refusal?.code).toBe("origin_not_allowed");
    expect(refusal?.message).toContain("SVC_ALLOWED_ORIGINS");
    expect(checkOrigin(public_, "null", "gw.example")?.code).toBe("origin_not_allowed");
  });

  test("loopback origins pass only when the gateway itself is bound to loopback", () => {
    expect(checkOrigin(loopback, "http://localhost:6274", "127.0.0.1:8080")).toBeUndefined();
    expect(checkOrigin(loopback, "http://[::1]:3000", "[::1]:8080")).toBeUndefined();
    expect(checkOrigin(public_, "http://localhost:6274", "gw.example")?.code).toBe("origin_not_allowed");
  });

  test("bound to loopback, a Host that is not loopback is a rebinding attempt", () => {
    expect(checkOrigin(loopback, undefined, "evil.example:8080")?.code).toBe("host_not_allowed");
    expect(checkOrigin(loopback, undefined, undefined)?.code).toBe("host_not_allowed");
    expect(checkOrigin(loopback, undefined, "localhost:8080")).toBeUndefined();
    expect(checkOrigin(public_, undefined, "evil.example")).toBeUndefined();
  });

  test("* admits any origin", () => {
    expect(
      checkOrigin({ allowed: "any", loopbackBound: false }, "https://anything.test", "gw"),
    ).toBeUndefined();
  });

  test("isLoopbackAddress", () => {
    expect(["localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"].every(isLoopbackAddress)).toBe(true);
    expect(["0.0.0.0", "10.0.0.1", "localhost.evil.example"].some(isLoopbackAddress)).toBe(false);
  });
});
