import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { validateConfigText } from "../../src/config/index.ts";
import { accessTokenOf, bearerChallenge, dpopChallenge } from "../../src/identity/bearer.ts";
import { protectedResourceMetadata, resourceMetadataUrl } from "../../src/identity/resource-metadata.ts";
import { TokenRejected } from "../../src/identity/token-rejected.ts";
import { ACCEPTED_ALGORITHMS } from "../../src/identity/token-verifier.ts";

const url = (path = "/github/mcp") => new URL(`http://gw.example.com${path}`);
const reasonOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as TokenRejected).reason;
  }
  return "accepted";
};

describe("accessTokenOf", () => {
  test("takes the token from Authorization: Bearer or DPoP, any case, and says which", () => {
    expect(accessTokenOf("Bearer abc.def.ghi", url())).toEqual({ scheme: "bearer", token: "abc.def.ghi" });
    expect(accessTokenOf("bearer abc.def.ghi", url())).toEqual({ scheme: "bearer", token: "abc.def.ghi" });
    expect(accessTokenOf("DPoP abc.def.ghi", url())).toEqual({ scheme: "dpop", token: "abc.def.ghi" });
    expect(accessTokenOf("dpop abc.def.ghi", url())).toEqual({ scheme: "dpop", token: "abc.def.ghi" });
  });
  test.each([
    [undefined, "missing"],
    ["", "missing"],
    ["Basic dXNlcjpwYXNz", "malformed"],
    ["Bearer", "malformed"],
    ["Bearer a b", "malformed"],
    ["DPoP", "malformed"],
    ["DPoPabc", "malformed"],
  ])("%j → %s", (header, reason) => {
    expect(reasonOf(() => accessTokenOf(header, url()))).toBe(reason);
  });
  test("a token in the query string is refused, even beside a valid header", () => {
    expect(reasonOf(() => accessTokenOf("Bearer abc", url("/github/mcp?access_token=abc")))).toBe(
      "malformed",
    );
  });
});

describe("bearerChallenge", () => {
  const metadata = "http://gw.example.com/.well-known/oauth-protected-resource/github/mcp";
  test("a missing token gets the metadata pointer and no error code", () => {
    expect(bearerChallenge(metadata)).toBe(`Bearer realm="svc-gateway", resource_metadata="${metadata}"`);
  });
  test("an invalid token says invalid_token", () => {
    expect(bearerChallenge(metadata, new TokenRejected("expired", "the token has expired"))).toBe(
      `Bearer realm="svc-gateway", error="invalid_token", error_description="the token has expired", resource_metadata="${metadata}"`,
    );
  });
});

describe("dpopChallenge (RFC 9449 section 7.1)", () => {
  const metadata = "http://gw.example.com/.well-known/oauth-protected-resource/github/mcp";
  test("a proof at fault says invalid_dpop_proof; a binding at fault says invalid_token; both list the algs", () => {
    const proof = dpopChallenge(metadata, new TokenRejected("invalid_dpop_proof", "the proof has no ath"));
    expect(proof).toMatch(/^DPoP realm="svc-gateway", error="invalid_dpop_proof", /);
    expect(proof).toContain('error_description="the proof has no ath"');
    expect(proof).toMatch(/algs="RS256 [^"]*ES256[^"]*"/);
    expect(proof).toContain(`resource_metadata="${metadata}"`);
    const binding = dpopChallenge(metadata, new TokenRejected("dpop_binding", "Invalid DPoP key binding"));
    expect(binding).toMatch(/^DPoP realm="svc-gateway", error="invalid_token", /);
  });
  test("a description quoting client input cannot break out of its quoted-string", () => {
    const challenge = dpopChallenge(
      metadata,
      new TokenRejected("invalid_dpop_proof", 'htm is "X\\", x="y\r\nSet-Cookie: a=b'),
    );
    expect(challenge).toContain(`error_description="htm is 'X?', x='y??Set-Cookie: a=b"`);
  });
});

describe("protected-resource metadata", () => {
  const config = (extra: Record<string, unknown> = {}) => {
    const result = validateConfigText(
      stringify({
        version: "1.0",
        identity_providers: [
          {
            name: "a",
            type: "hosted_idp",
            issuer: "https://a.example.com/",
            jwks_uri: "https://a.example.com/jwks",
          },
          {
            name: "b",
            type: "hosted_idp",
            issuer: "https://b.example.com/",
            jwks_uri: "https://b.example.com/jwks",
          },
        ],
        servers: [
          {
            name: "github",
            url: "https://up.example.com/mcp",
            idp: "b",
            description: "GitHub",
            upstream_auth_type: "none",
          },
          { name: "open", url: "https://up2.example.com/mcp", upstream_auth_type: "none" },
        ],
        ...extra,
      }),
      { env: {} },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    return result.config;
  };

  test("gateway-wide: every provider's issuer", () => {
    expect(protectedResourceMetadata(config(), "http://gw.example.com/base")).toEqual({
      resource: "http://gw.example.com",
      authorization_servers: ["https://a.example.com/", "https://b.example.com/"],
      scopes_supported: [],
      bearer_methods_supported: ["header"],
      dpop_signing_alg_values_supported: ACCEPTED_ALGORITHMS,
    });
  });
  test("path-scoped for a server with an idp: that provider only", () => {
    expect(protectedResourceMetadata(config(), "http://gw.example.com", "github")).toEqual({
      resource: "http://gw.example.com/github/mcp",
      authorization_servers: ["https://b.example.com/"],
      scopes_supported: [],
      bearer_methods_supported: ["header"],
      dpop_signing_alg_values_supported: ACCEPTED_ALGORITHMS,
      resource_name: "GitHub",
    });
  });
  test("a Host that is not a valid authority gives path-only links, not an exception (a 401, not a 500)", () => {
    expect(resourceMetadataUrl("http://bad host", "github")).toBe(
      "/.well-known/oauth-protected-resource/github/mcp",
    );
    expect(protectedResourceMetadata(config(), "http://bad host", "github").resource).toBe("/github/mcp");
  });

  test("metadata URLs put the well-known prefix before the resource path", () => {
    expect(resourceMetadataUrl("http://gw.example.com")).toBe(
      "http://gw.example.com/.well-known/oauth-protected-resource",
    );
    expect(resourceMetadataUrl("http://gw.example.com", "github")).toBe(
      "http://gw.example.com/.well-known/oauth-protected-resource/github/mcp",
    );
  });
});
