import { describe, expect, it } from "vitest";
import { isMachineToken } from "../../src/identity/principal.ts";
import { parseBearerChallenge } from "../../src/upstream-oauth/challenge.ts";

describe("an upstream's Bearer challenge", () => {
  it("reads error, scopes and resource_metadata, from one header or several", async () => {
    expect(
      await parseBearerChallenge(
        'Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.acme.example/.well-known/oauth-protected-resource/mcp"',
      ),
    ).toEqual({
      error: "insufficient_scope",
      scopes: ["files:read", "files:write"],
      resourceMetadata: "https://mcp.acme.example/.well-known/oauth-protected-resource/mcp",
    });
    expect(await parseBearerChallenge(['Basic realm="x"', 'Bearer error="invalid_token"'])).toEqual({
      error: "invalid_token",
      scopes: [],
      resourceMetadata: undefined,
    });
  });

  it("yields nothing for no header, another scheme, garbage or an oversized header", async () => {
    const none = { error: undefined, scopes: [], resourceMetadata: undefined };
    expect(await parseBearerChallenge(undefined)).toEqual(none);
    expect(await parseBearerChallenge('Basic realm="x"')).toEqual(none);
    expect(await parseBearerChallenge("Bearer ,,, =")).toEqual(none);
    expect(await parseBearerChallenge(`Bearer error="${"x".repeat(5000)}"`)).toEqual(none);
  });
});

describe("which gateway tokens are a machine's", () => {
  it("is a machine when the subject is the client, or the provider says client-credentials", () => {
    expect(isMachineToken({ sub: "job-7", client_id: "job-7" })).toBe(true);
    expect(isMachineToken({ sub: "job-7", azp: "job-7" })).toBe(true);
    expect(isMachineToken({ sub: "abc@clients", gty: "client-credentials" })).toBe(true);
    expect(isMachineToken({ sub: "alice", client_id: "mcp-inspector" })).toBe(false);
    expect(isMachineToken({ sub: "alice", azp: "web-app" })).toBe(false);
    expect(isMachineToken({ sub: "alice" })).toBe(false);
  });
});
