import { generateKeyPairSync } from "node:crypto";
import { exportJWK, SignJWT } from "jose";
import { describe, expect, test } from "vitest";
import { MemoryKvStore } from "../../src/kv/index.ts";
import { ReplayGuard } from "../../src/limits/replay-guard.ts";

const URL_ = "https://gw.example.com/github/mcp";

describe("JSON-RPC request ids", () => {
  test("an id is accepted once per session", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.requestId("github", "session-1", 7)).toBe("first");
    expect(await guard.requestId("github", "session-1", 7)).toBe("replay");
  });
  test("the same id in another session, another server, or as a string is a different request", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    await guard.requestId("github", "session-1", 7);
    expect(await guard.requestId("github", "session-2", 7)).toBe("first");
    expect(await guard.requestId("jira", "session-1", 7)).toBe("first");
    expect(await guard.requestId("github", "session-1", "7")).toBe("first");
  });
});

describe("DPoP proofs", () => {
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

  test("a proof's jti is single-use", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    const once = await proof({});
    expect(await guard.dpopProof(once, "POST", URL_)).toBe("first");
    expect(await guard.dpopProof(once, "POST", URL_)).toBe("replay");
  });

  test("the query string does not matter to htu", async () => {
    const guard = new ReplayGuard(new MemoryKvStore());
    expect(await guard.dpopProof(await proof({}), "POST", `${URL_}?x=1`)).toBe("first");
  });

  test.each([
    [{ htm: "GET" }, {}, /^htm is GET/],
    [{ htu: "https://other.example.com/mcp" }, {}, /^htu does not match/],
    [{ iat: Math.floor(Date.now() / 1000) - 3600 }, {}, /^iat is outside/],
    [{ jti: undefined }, {}, /^the proof has no jti/],
    [{}, { typ: "JWT" }, /^the DPoP proof does not verify/],
  ])("an invalid proof is refused: %j %j", async (claims, header, reason) => {
    const guard = new ReplayGuard(new MemoryKvStore());
    const verdict = await guard.dpopProof(await proof(claims, header), "POST", URL_);
    expect(verdict).toEqual({ invalid: expect.stringMatching(reason) });
  });

  test("a proof signed by another key than the one it embeds is refused", async () => {
    const other = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const forged = await new SignJWT({ htm: "POST", htu: URL_, iat: Math.floor(Date.now() / 1000), jti: "j" })
      .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: await exportJWK(key.publicKey) })
      .sign(other.privateKey);
    expect(await new ReplayGuard(new MemoryKvStore()).dpopProof(forged, "POST", URL_)).toEqual({
      invalid: expect.stringMatching(/does not verify/),
    });
  });
});
