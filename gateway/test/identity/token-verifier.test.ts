import { createServer } from "node:net";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { type IdentityProviderConfig, validateConfigText } from "../../src/config/index.ts";
import { TokenRejected } from "../../src/identity/token-rejected.ts";
import { TokenVerifier } from "../../src/identity/token-verifier.ts";
import { startTestIdentityProvider, type TestIdentityProvider } from "./support/test-identity-provider.ts";

const AUDIENCE = "https://gateway.test/mcp";
let idp: TestIdentityProvider;

function providers(entries: Record<string, unknown>[]): IdentityProviderConfig[] {
  const result = validateConfigText(stringify({ version: "1.0", identity_providers: entries }), { env: {} });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config.identity_providers;
}

const corporate = () => ({
  name: "corp",
  type: "hosted_idp",
  issuer: idp.issuer,
  jwks_uri: idp.jwksUri,
  api_identifiers: [AUDIENCE],
});

async function rejection(verifier: TokenVerifier, token: string): Promise<string> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof TokenRejected)) throw new Error(`expected a TokenRejected, got ${String(error)}`);
  return error.reason;
}

beforeAll(async () => {
  idp = await startTestIdentityProvider();
});
afterAll(async () => {
  await idp.close();
});

describe("tokens the identity provider issues", () => {
  test.each(["RS256", "ES256"] as const)(
    "a valid %s token yields the principal, with its groups",
    async (alg) => {
      const verifier = new TokenVerifier(providers([corporate()]));
      const token = await idp.token({
        resource: AUDIENCE,
        alg,
        claims: {
          groups: ["engineering"],
          roles: "admin",
          "https://acme.example.com/roles": ["oncall", "admin"],
        },
      });
      const principal = await verifier.verify(token);
      expect(principal).toMatchObject({ sub: "gateway-test-client", idp: "corp" });
      expect(principal.groups.sort()).toEqual(["admin", "engineering", "oncall"]);
      expect(principal.expiresAt).toBeGreaterThan(Date.now() / 1000);
    },
  );

  test("a token for another resource is refused: audience must match api_identifiers", async () => {
    const verifier = new TokenVerifier(providers([corporate()]));
    expect(await rejection(verifier, await idp.token({ resource: "https://other.test/api" }))).toBe(
      "wrong_audience",
    );
  });

  describe("without api_identifiers: the gateway's own resource URLs (RFC 8707), never any audience", () => {
    const gatewayOrigin = "https://mcp.example.com";
    const verifier = () =>
      new TokenVerifier(providers([{ ...corporate(), api_identifiers: [] }]), { gatewayOrigin });

    test("a token for another API of the provider is refused", async () => {
      expect(await rejection(verifier(), await idp.token({ resource: "https://other.test/api" }))).toBe(
        "wrong_audience",
      );
      expect(
        await rejection(verifier(), await idp.token({ resource: "https://mcp.example.com.evil/x/mcp" })),
      ).toBe("wrong_audience");
    });

    test("a token for the gateway or one of its servers is accepted, naming that resource", async () => {
      const whole = await verifier().verify(await idp.token({ resource: gatewayOrigin }));
      expect(whole.resources).toEqual([gatewayOrigin]);
      const one = await verifier().verify(await idp.token({ resource: `${gatewayOrigin}/tools/mcp` }));
      expect(one.resources).toEqual([`${gatewayOrigin}/tools/mcp`]);
    });

    test("without the gateway's public URL such a provider cannot be trusted at all", () => {
      expect(() => new TokenVerifier(providers([{ ...corporate(), api_identifiers: [] }]))).toThrow(
        /no api_identifiers and the gateway's public URL is unknown/,
      );
    });
  });
});

describe("crafted tokens, signed with the provider's own key", () => {
  const verifier = () => new TokenVerifier(providers([corporate()]), { clockToleranceSeconds: 30 });
  const now = () => Math.floor(Date.now() / 1000);

  test("an audience array intersecting api_identifiers is accepted", async () => {
    const token = await idp.sign({ aud: ["https://elsewhere.test", AUDIENCE] });
    expect((await verifier().verify(token)).sub).toBe("crafted-subject");
  });

  test.each([
    ["expired", { aud: AUDIENCE, exp: now() - 120 }],
    ["not_yet_valid", { aud: AUDIENCE, nbf: now() + 120 }],
    ["not_yet_valid", { aud: AUDIENCE, iat: now() + 120 }],
    ["untrusted_issuer", { aud: AUDIENCE, iss: "https://evil.example.com" }],
    ["wrong_audience", { aud: "https://other.test" }],
    ["wrong_audience", { aud: undefined }],
    ["missing_claim", { aud: AUDIENCE, exp: undefined }],
    ["missing_claim", { aud: AUDIENCE, sub: undefined }],
  ])("%s: %j", async (reason, payload) => {
    expect(await rejection(verifier(), await idp.sign(payload as Record<string, unknown>))).toBe(reason);
  });

  test("within the clock tolerance, a token issued a little in the future (iat, nbf) still passes", async () => {
    const token = await idp.sign({ aud: AUDIENCE, iat: now() + 5, nbf: now() + 5 });
    expect((await verifier().verify(token)).sub).toBe("crafted-subject");
  });

  test("within the clock tolerance, a just-expired token still passes", async () => {
    expect((await verifier().verify(await idp.sign({ aud: AUDIENCE, exp: now() - 5 }))).sub).toBe(
      "crafted-subject",
    );
  });

  test.each(["none", "None", "NONE", "nOnE"])("alg %s is refused", async (alg) => {
    const header = Buffer.from(JSON.stringify({ alg, typ: "JWT" })).toString("base64url");
    const body = Buffer.from(
      JSON.stringify({ iss: idp.issuer, sub: "x", aud: AUDIENCE, exp: now() + 60 }),
    ).toString("base64url");
    expect(await rejection(verifier(), `${header}.${body}.`)).toBe("unsupported_algorithm");
  });

  test("HS256 signed with the provider's public key is refused", async () => {
    const token = await new SignJWT({ iss: idp.issuer, sub: "x", aud: AUDIENCE, exp: now() + 60 })
      .setProtectedHeader({ alg: "HS256" })
      .sign(Buffer.from(idp.publicPem("RS256")));
    expect(await rejection(verifier(), token)).toBe("unsupported_algorithm");
  });

  test("a tampered payload fails the signature", async () => {
    const [header, , signature] = (await idp.sign({ aud: AUDIENCE, groups: ["users"] })).split(".");
    const forged = Buffer.from(
      JSON.stringify({
        iss: idp.issuer,
        sub: "crafted-subject",
        aud: AUDIENCE,
        exp: now() + 60,
        groups: ["admin"],
      }),
    ).toString("base64url");
    expect(await rejection(verifier(), `${header}.${forged}.${signature}`)).toBe("bad_signature");
  });

  test("an empty signature fails", async () => {
    const [header, payload] = (await idp.sign({ aud: AUDIENCE })).split(".");
    expect(await rejection(verifier(), `${header}.${payload}.`)).toBe("bad_signature");
  });

  test.each([
    ["jwk", { jwk: { kty: "oct", k: "AAAA" } }],
    ["jku", { jku: "https://evil.example.com/jwks" }],
    ["x5u", { x5u: "https://evil.example.com/cert" }],
  ])("a token carrying %s in its header is refused", async (_name, header) => {
    expect(await rejection(verifier(), await idp.sign({ aud: AUDIENCE }, { header }))).toBe("embedded_key");
  });

  test("a key the provider does not publish is refused", async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const token = await new SignJWT({ iss: idp.issuer, sub: "x", aud: AUDIENCE, exp: now() + 60 })
      .setProtectedHeader({ alg: "RS256", kid: "not-published" })
      .sign(stranger.privateKey);
    expect(await rejection(verifier(), token)).toBe("unknown_key");
  });

  test.each(["", "abc", "a.b.c", "Bearer x"])("malformed %j is refused", async (token) => {
    expect(await rejection(verifier(), token)).toBe("malformed");
  });
});

describe("keys and caching", () => {
  test("key rotation at the provider is picked up", async () => {
    const verifier = new TokenVerifier(providers([corporate()]), { jwksCooldownMs: 0 });
    expect((await verifier.verify(await idp.token({ resource: AUDIENCE }))).idp).toBe("corp");
    await idp.rotateKeys();
    expect((await verifier.verify(await idp.token({ resource: AUDIENCE, alg: "ES256" }))).idp).toBe("corp");
  });

  test("a verified token is answered from the cache until it expires", async () => {
    let clock = Date.now();
    const verifier = new TokenVerifier(providers([corporate()]), {
      now: () => clock,
      clockToleranceSeconds: 0,
    });
    const token = await idp.sign({ aud: AUDIENCE, exp: Math.floor(clock / 1000) + 60 });
    const first = await verifier.verify(token);
    expect(await verifier.verify(token)).toBe(first); // the same object: no second verification
    clock += 61_000;
    expect(await rejection(verifier, token)).toBe("expired");
  });

  test("an unreachable JWKS refuses the token (never fails open)", async () => {
    const port = await closedPort();
    const verifier = new TokenVerifier(
      providers([{ ...corporate(), jwks_uri: `http://127.0.0.1:${port}/jwks`, timeout: 1 }]),
    );
    expect(await rejection(verifier, await idp.sign({ aud: AUDIENCE }))).toBe("jwks_unavailable");
  });
});

describe("directory_idp issuers", () => {
  const tenant = "11111111-2222-3333-4444-555555555555";
  test.each([`https://login.microsoftonline.com/${tenant}/v2.0`, `https://sts.windows.net/${tenant}/`])(
    "accepts %s for the configured tenant",
    async (iss) => {
      const verifier = new TokenVerifier(
        providers([
          {
            name: "entra",
            type: "directory_idp",
            tenant_id: tenant,
            issuer: `https://login.microsoftonline.com/${tenant}/v2.0`,
            jwks_uri: idp.jwksUri,
            api_identifiers: ["api://gw"],
          },
        ]),
      );
      expect((await verifier.verify(await idp.sign({ iss, aud: "api://gw" }))).idp).toBe("entra");
    },
  );

  test("another tenant's issuer is refused", async () => {
    const verifier = new TokenVerifier(
      providers([
        {
          name: "entra",
          type: "directory_idp",
          tenant_id: tenant,
          issuer: `https://login.microsoftonline.com/${tenant}/v2.0`,
          jwks_uri: idp.jwksUri,
          api_identifiers: ["api://gw"],
        },
      ]),
    );
    expect(await rejection(verifier, await idp.sign({ iss: "https://sts.windows.net/other-tenant/" }))).toBe(
      "untrusted_issuer",
    );
  });
});

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
