// SVC_FORWARD_REQUEST_HEADERS, read once at start: it extends the request headers upstreams receive, and a name
// that carries credentials or a client's claim about its identity or route stops the start, naming the variable.
import { describe, expect, test } from "vitest";
import { DEFAULT_FORWARDED_REQUEST_HEADERS } from "../../src/proxy/headers.ts";
import { readSettings, SettingsError } from "../../src/server/settings.ts";

describe("SVC_FORWARD_REQUEST_HEADERS", () => {
  test("unset: the built-in list", () => {
    expect([...readSettings({}).forwardRequestHeaders]).toEqual(DEFAULT_FORWARDED_REQUEST_HEADERS);
  });

  test("extends the list (comma-separated, any case, blanks ignored)", () => {
    const allowed = readSettings({
      SVC_FORWARD_REQUEST_HEADERS: " X-Correlation-Id,, x-tenant-hint ",
    }).forwardRequestHeaders;
    expect(allowed.has("x-correlation-id")).toBe(true);
    expect(allowed.has("x-tenant-hint")).toBe(true);
    expect(allowed.has("mcp-session-id")).toBe(true);
  });

  test.each([
    ["X-Forwarded-User", /'x-forwarded-user' looks like a credential or an identity\/forwarding header/],
    ["authorization", /'authorization' looks like a credential/],
    ["x-auth-request-email", /'x-auth-request-email' looks like a credential/],
    ["x-request-id", /'x-request-id' is set by the gateway itself/],
    ["x-correlation id", /'x-correlation id' is not an HTTP header name/],
  ])("refuses %s, naming the variable", (name, message) => {
    const read = () => readSettings({ SVC_FORWARD_REQUEST_HEADERS: `x-correlation-id,${name}` });
    expect(read).toThrow(SettingsError);
    expect(read).toThrow(/^SVC_FORWARD_REQUEST_HEADERS: /);
    expect(read).toThrow(message);
  });
});
