// The DPoP proof checks of RFC 9449 section 4.3, one by one, on proofs made with jose and a generated key. The
// binding to a token (cnf.jkt, ath) is authentication's and is tested through a real gateway
// (test/identity/gateway-dpop-binding.test.ts).
import { generateKeyPairSync } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, SignJWT } from "jose";
import { describe, expect, test } from "vitest";
import { verifyDpopProof } from "../../src/identity/dpop-proof.ts";
import { TokenRejected } from "../../src/identity/token-rejected.ts";

const URL_ = "https://gw.example.com/github/mcp";
const key = generateKeyPairSync("ec", { namedCurve: "P-256" });
const proof = async (claims: Record<string, unknown>, header: Record<string, unknown> = {}) =>
  new SignJWT({
    htm: "POST",
    htu: URL_,
    iat: Math.floor(Date.now() / 1000),
    jti: crypto.randomUUID(),
    ...claims,
  })
    .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: await exportJWK(key.publicKey), ...header })
    .sign(key.privateKey);

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TokenRejected);
    expect((error as TokenRejected).reason).toBe("invalid_dpop_proof");
    return (error as TokenRejected).message;
  }
  throw new Error("the proof was accepted");
}

describe("verifyDpopProof", () => {
  test("a valid proof yields its key's RFC 7638 thumbprint, its jti and its ath", async () => {
    const verified = await verifyDpopProof(await proof({ jti: "j-1", ath: "abc" }), "POST", URL_, Date.now());
    expect(verified).toEqual({
      thumbprint: await calculateJwkThumbprint(await exportJWK(key.publicKey)),
      jti: "j-1",
      ath: "abc",
    });
  });

  test("the query string does not matter to htu", async () => {
    const verified = await verifyDpopProof(await proof({}), "POST", `${URL_}?x=1`, Date.now());
    expect(verified.ath).toBeUndefined();
  });

  test.each([
    [{ htm: "GET" }, {}, /^htm is GET/],
    [{ htu: "https://other.example.com/mcp" }, {}, /^htu does not match/],
    [{ iat: Math.floor(Date.now() / 1000) - 3600 }, {}, /^iat is outside/],
    [{ iat: undefined }, {}, /^iat is outside/],
    [{ jti: undefined }, {}, /^the proof has no jti/],
    [{ ath: 42 }, {}, /^ath is not a string/],
    [{}, { typ: "JWT" }, /^the DPoP proof does not verify/],
  ])("an invalid proof is refused: %j %j", async (claims, header, reason) => {
    expect(await refusal(verifyDpopProof(await proof(claims, header), "POST", URL_, Date.now()))).toMatch(
      reason,
    );
  });

  test("no proof, a proof signed by another key than it embeds, or embedding a private key, is refused", async () => {
    expect(await refusal(verifyDpopProof(undefined, "POST", URL_, Date.now()))).toMatch(/no DPoP proof/);
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const claims = { htm: "POST", htu: URL_, iat: Math.floor(Date.now() / 1000), jti: "j" };
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: await exportJWK(key.publicKey) })
      .sign(other.privateKey);
    expect(await refusal(verifyDpopProof(forged, "POST", URL_, Date.now()))).toMatch(/does not verify/);
    const leaky = await new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: await exportJWK(key.privateKey) })
      .sign(key.privateKey);
    expect(await refusal(verifyDpopProof(leaky, "POST", URL_, Date.now()))).toMatch(/does not verify/);
  });
});
