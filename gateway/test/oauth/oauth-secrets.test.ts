// The OAuth server's keys come from the environment, or the gateway refuses to start and says which ones; only the
// explicit development flag makes up throwaway keys.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { validateConfigText } from "../../src/config/index.ts";
import { readOAuthSecrets } from "../../src/oauth/oauth-secrets.ts";

const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
const PRIVATE = { ...privateKey.export({ format: "jwk" }), kid: "k1", alg: "ES256" };
const KV_KEY = randomBytes(32).toString("base64");

describe("readOAuthSecrets", () => {
  it("refuses to go on without keys, naming both variables and the development flag", () => {
    expect(() => readOAuthSecrets({})).toThrow(
      /SVC_OAUTH_SIGNING_KEYS and SVC_OAUTH_KV_KEY are not set.*SVC_OAUTH_DEV_KEYS=true/,
    );
    expect(() => readOAuthSecrets({ SVC_OAUTH_KV_KEY: KV_KEY })).toThrow(/SVC_OAUTH_SIGNING_KEYS is not set/);
  });

  it("makes up throwaway keys only with SVC_OAUTH_DEV_KEYS=true", () => {
    const secrets = readOAuthSecrets({ SVC_OAUTH_DEV_KEYS: "true" });
    expect(secrets.ephemeral).toBe(true);
    expect(secrets.kvKey).toHaveLength(32);
    expect(() => readOAuthSecrets({ SVC_OAUTH_DEV_KEYS: "1" })).toThrow(/not set/);
  });

  it("reads the keys and the registration token", () => {
    const secrets = readOAuthSecrets({
      SVC_OAUTH_SIGNING_KEYS: JSON.stringify({ keys: [PRIVATE] }),
      SVC_OAUTH_KV_KEY: KV_KEY,
      SVC_OAUTH_REGISTRATION_TOKEN: "initial-token",
    });
    expect(secrets.ephemeral).toBe(false);
    expect(secrets.signingKeys[0]?.kid).toBe("k1");
    expect(secrets.registrationToken).toBe("initial-token");
  });

  it.each([
    ["not JSON", "{keys", /is not JSON/],
    ["no keys", '{"keys":[]}', /1 to 10 private JWKs/],
    ["a key without kid", JSON.stringify({ keys: [{ ...PRIVATE, kid: undefined }] }), /keys\[0\] has no kid/],
    ["a symmetric algorithm", JSON.stringify({ keys: [{ ...PRIVATE, alg: "HS256" }] }), /alg must be one of/],
    [
      "a public key",
      JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: "p", alg: "ES256" }] }),
      /is a public key/,
    ],
  ])("refuses signing keys that are %s", (_what, value, message) => {
    expect(() => readOAuthSecrets({ SVC_OAUTH_SIGNING_KEYS: value, SVC_OAUTH_KV_KEY: KV_KEY })).toThrow(
      message,
    );
  });

  it("refuses a KV key that is not 32 bytes", () => {
    expect(() =>
      readOAuthSecrets({
        SVC_OAUTH_SIGNING_KEYS: JSON.stringify({ keys: [PRIVATE] }),
        SVC_OAUTH_KV_KEY: randomBytes(16).toString("base64"),
      }),
    ).toThrow(/must be 32 bytes.*decodes to 16 bytes/);
  });
});

describe("oauth_server in the configuration", () => {
  const IDP = [
    "identity_providers:",
    "  - name: company",
    "    type: hosted_idp",
    "    issuer: https://idp.example.com",
    "    jwks_uri: https://idp.example.com/jwks",
  ].join("\n");

  function problems(text: string): string[] {
    const result = validateConfigText(text, { env: {} });
    return "problems" in result ? result.problems.map((p) => `${p.path}: ${p.message}`) : [];
  }

  it("is accepted with an identity provider and the gateway's client there", () => {
    expect(
      problems(`version: "1.0"\n${IDP}\noauth_server:\n  idp_client_id: gw\n  idp_client_secret: s\n`),
    ).toEqual([]);
  });

  it("needs an identity provider and the client id and secret there", () => {
    const found = problems('version: "1.0"\noauth_server: {}\n').join("\n");
    expect(found).toMatch(/oauth_server.*needs an identity provider/);
    expect(found).toMatch(/idp_client_id.*is required/);
    expect(found).toMatch(/idp_client_secret.*is required/);
  });

  it("refuses a server named oauth, whose route the authorization server owns", () => {
    const text = `version: "1.0"\n${IDP}\nservers:\n  - name: oauth\n    url: http://127.0.0.1:1/mcp\n    upstream_auth_type: none\noauth_server:\n  idp_client_id: gw\n  idp_client_secret: s\n`;
    expect(problems(text).join("\n")).toMatch(/oauth is taken by oauth_server/);
  });
});
